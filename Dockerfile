# Multi-stage build: compile with the dev toolchain, ship only the build output and production dependencies.
# The supported Node.js lines are 22, 24 and 26 (the README's list); the image uses 24 unless built with
# --build-arg NODE_MAJOR=22 or 26.
ARG NODE_MAJOR=24
FROM node:${NODE_MAJOR}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN node scripts/build.mjs \
 # The image runs against an external PostgreSQL: drop the dev toolchain and the embedded PostgreSQL binaries.
 && npm prune --omit=dev --omit=optional

FROM node:${NODE_MAJOR}-slim
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Inside the image the database is always external: refuse to start without DATABASE_URL.
ENTRYPOINT ["/bin/sh", "-c", "if [ -z \"$DATABASE_URL\" ]; then echo 'DATABASE_URL is required in the container image' >&2; exit 2; fi; exec node $(node -p \"require('./package.json').config.nodeFlags\") dist/main.js"]

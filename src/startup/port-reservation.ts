import { createServer, type Server } from 'node:net';
import { StartupError } from '../common/startup-error.js';

/** The reasons a port cannot be listened on, in words an operator can act on. */
function portFailure(port: number, error: NodeJS.ErrnoException): Error {
  if (error.code === 'EADDRINUSE') {
    return new StartupError(`port ${port} is already in use by another process: stop that process or set PORT to a free port`);
  }
  if (error.code === 'EACCES') {
    return new StartupError(`no permission to listen on port ${port}: set PORT to a port above 1023`);
  }
  return error;
}

/**
 * Holds the service's port from the first moment of start-up, so that a taken port stops the service before
 * anything is created or printed (no database started, no admin key generated), and no other process can
 * take it while the service starts. Released just before the HTTP server listens on it.
 */
export class PortReservation {
  private constructor(
    readonly port: number,
    private readonly server: Server | undefined,
  ) {}

  static async take(port: number): Promise<PortReservation> {
    // Port 0 lets the system choose at listen time: nothing to reserve.
    if (port === 0) return new PortReservation(port, undefined);
    // Connections made to the port during start-up are refused rather than left hanging.
    const server = createServer({ pauseOnConnect: true }, (socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(portFailure(port, error)));
      // The same address as the HTTP server's listen(port): every interface.
      server.listen(port, () => resolve());
    });
    return new PortReservation(port, server);
  }

  async release(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The HTTP server's own listen, failing like the reservation would (the port was free a moment ago). */
  async listen(start: (port: number) => Promise<unknown>): Promise<void> {
    await this.release();
    try {
      await start(this.port);
    } catch (error) {
      throw portFailure(this.port, error as NodeJS.ErrnoException);
    }
  }
}

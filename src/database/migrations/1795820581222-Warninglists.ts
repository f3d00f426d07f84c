import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Warninglists (extensions §15, src/warninglists). A list's settings are one row; its entries, normalised,
 * are rows of `warninglist_entry` in the list's order (`position`, the keyset of the paged entries).
 * `revision` moves with every change of a list (its tag, and the export tags' part for lists); it and
 * `entries_revision`, which moves only when the entries are replaced, are drawn from one sequence, so a
 * number is never reused: instances cache compiled entries by `entries_revision` without invalidation.
 *
 * The two built-in lists are written here, once: editable like any other list, restored by nothing.
 */
export class Warninglists1795820581222 implements MigrationInterface {
  name = 'Warninglists1795820581222';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SEQUENCE warninglist_revision`);
    await queryRunner.query(`
      CREATE TABLE warninglist (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL UNIQUE,
        description text NOT NULL DEFAULT '',
        kind text NOT NULL CHECK (kind IN ('values', 'cidr', 'hostname', 'substring')),
        key_types text[],
        action text NOT NULL CHECK (action IN ('annotate', 'excludeFromExport', 'rejectOnIngest')),
        enabled boolean NOT NULL DEFAULT true,
        version text,
        document_sha256 text,
        entry_count integer NOT NULL DEFAULT 0,
        revision bigint NOT NULL DEFAULT nextval('warninglist_revision'),
        entries_revision bigint NOT NULL DEFAULT nextval('warninglist_revision'),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE warninglist_entry (
        list_id integer NOT NULL REFERENCES warninglist (id) ON DELETE CASCADE,
        position integer NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (list_id, position)
      )`);
    for (const list of BUILT_IN) {
      await queryRunner.query(
        `WITH list AS (
           INSERT INTO warninglist (name, description, kind, action, entry_count) VALUES ($1, $2, 'cidr', 'excludeFromExport', cardinality($3::text[]))
           RETURNING id
         )
         INSERT INTO warninglist_entry (list_id, position, value) SELECT list.id, e.n, e.value FROM list, unnest($3::text[]) WITH ORDINALITY AS e(value, n)`,
        [list.name, list.description, list.entries],
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE warninglist_entry`);
    await queryRunner.query(`DROP TABLE warninglist`);
    await queryRunner.query(`DROP SEQUENCE warninglist_revision`);
  }
}

const BUILT_IN = [
  {
    name: 'special-purpose-networks',
    description:
      'Networks that are never a remote attacker on the public Internet: from the IANA IPv4 and IPv6 Special-Purpose ' +
      'Address Registries (iana.org/assignments/iana-ipv4-special-registry, iana-ipv6-special-registry), multicast and ' +
      'reserved space. Documentation and benchmarking ranges are left out on purpose: test data uses them.',
    entries: [
      // IANA IPv4 Special-Purpose Address Registry (RFC 6890 and the RFCs it lists).
      '0.0.0.0/8', // "This network" (RFC 791 §3.2)
      '10.0.0.0/8', // Private-Use (RFC 1918)
      '100.64.0.0/10', // Shared Address Space, carrier-grade NAT (RFC 6598)
      '127.0.0.0/8', // Loopback (RFC 1122 §3.2.1.3)
      '169.254.0.0/16', // Link Local (RFC 3927)
      '172.16.0.0/12', // Private-Use (RFC 1918)
      '192.168.0.0/16', // Private-Use (RFC 1918)
      // IANA IPv4 Address Space Registry: multicast (RFC 5771) and reserved for future use (RFC 1112 §4).
      '224.0.0.0/4',
      '240.0.0.0/4',
      '255.255.255.255/32', // Limited Broadcast (RFC 919 §7), also in the special-purpose registry
      // IANA IPv6 Special-Purpose Address Registry.
      '::/128', // Unspecified Address (RFC 4291)
      '::1/128', // Loopback Address (RFC 4291)
      '::ffff:0.0.0.0/96', // IPv4-mapped Address (RFC 4291)
      'fc00::/7', // Unique-Local (RFC 4193)
      'fe80::/10', // Link-Local Unicast (RFC 4291)
      // IANA IPv6 Multicast Address Space Registry (RFC 4291 §2.7).
      'ff00::/8',
    ],
  },
  {
    name: 'public-dns-resolvers',
    description:
      'The published addresses of the big public DNS resolvers (Google, Cloudflare, Quad9, OpenDNS, AdGuard, ' +
      'CleanBrowsing, Level3): blocking one of them breaks name resolution for whoever uses it.',
    entries: [
      // Google Public DNS: developers.google.com/speed/public-dns/docs/using (and its DNS64 page).
      '8.8.8.8/32',
      '8.8.4.4/32',
      '2001:4860:4860::8888/128',
      '2001:4860:4860::8844/128',
      '2001:4860:4860::6464/128',
      '2001:4860:4860::64/128',
      // Cloudflare 1.1.1.1, 1.1.1.1 for Families (malware, adult) and DNS64: developers.cloudflare.com/1.1.1.1/ip-addresses/.
      '1.1.1.1/32',
      '1.0.0.1/32',
      '2606:4700:4700::1111/128',
      '2606:4700:4700::1001/128',
      '1.1.1.2/32',
      '1.0.0.2/32',
      '2606:4700:4700::1112/128',
      '2606:4700:4700::1002/128',
      '1.1.1.3/32',
      '1.0.0.3/32',
      '2606:4700:4700::1113/128',
      '2606:4700:4700::1003/128',
      '2606:4700:4700::64/128',
      '2606:4700:4700::6400/128',
      // Quad9: quad9.net/service/service-addresses-and-features (secure, unsecured, with ECS).
      '9.9.9.9/32',
      '149.112.112.112/32',
      '2620:fe::fe/128',
      '2620:fe::9/128',
      '9.9.9.10/32',
      '149.112.112.10/32',
      '2620:fe::10/128',
      '2620:fe::fe:10/128',
      '9.9.9.11/32',
      '149.112.112.11/32',
      '2620:fe::11/128',
      '2620:fe::fe:11/128',
      // OpenDNS (Cisco Umbrella) Home and FamilyShield: support.opendns.com, "OpenDNS IP addresses".
      '208.67.222.222/32',
      '208.67.220.220/32',
      '2620:119:35::35/128',
      '2620:119:53::53/128',
      '208.67.222.123/32',
      '208.67.220.123/32',
      // AdGuard DNS default, non-filtering and family servers: adguard-dns.io/kb/general/dns-providers/.
      '94.140.14.14/32',
      '94.140.15.15/32',
      '2a10:50c0::ad1:ff/128',
      '2a10:50c0::ad2:ff/128',
      '94.140.14.140/32',
      '94.140.14.141/32',
      '2a10:50c0::1:ff/128',
      '2a10:50c0::2:ff/128',
      '94.140.14.15/32',
      '94.140.15.16/32',
      '2a10:50c0::bad1:ff/128',
      '2a10:50c0::bad2:ff/128',
      // CleanBrowsing security, adult and family filters: cleanbrowsing.org/filters/.
      '185.228.168.9/32',
      '185.228.169.9/32',
      '2a0d:2a00:1::2/128',
      '2a0d:2a00:2::2/128',
      '185.228.168.10/32',
      '185.228.169.11/32',
      '2a0d:2a00:1::1/128',
      '2a0d:2a00:2::1/128',
      '185.228.168.168/32',
      '185.228.169.168/32',
      '2a0d:2a00:1::/128',
      '2a0d:2a00:2::/128',
      // Level3 (Lumen) resolvers, long published and widely configured: 4.2.2.1–4.2.2.6.
      '4.2.2.1/32',
      '4.2.2.2/32',
      '4.2.2.3/32',
      '4.2.2.4/32',
      '4.2.2.5/32',
      '4.2.2.6/32',
    ],
  },
];

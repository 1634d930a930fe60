import Foundation

/// The tables a rebuild fills while the read models stay in service: `ledger.orders_next`
/// and `ledger.enrollments_next`, made like the live tables from the catalog (columns,
/// check and key constraints, storage, compression, statistics targets, options, comments,
/// owner, grants, indexes), then swapped in for them in one transaction.
///
/// The swap renames each live table away and its shadow (and the shadow's indexes) to its
/// name, then the old one is dropped: whatever PostgreSQL binds by name (prepared statements, plans, queries waiting for
/// the lock) finds the new table. Whatever it binds by OID (views, foreign keys, triggers,
/// policies, publications, owned sequences, extended statistics, columns of the row type)
/// would stay with the old table and go when it is dropped: `refuseUnknownDependents` stops a rebuild before
/// it starts when any exists, naming it, rather than swap one away.
package struct ShadowTables: Sendable {
    /// The read models, by name in schema `ledger`.
    package static let tables = ["orders", "enrollments"]
    package static let suffix = "_next"

    package init() {}

    package static func live(_ table: String) -> String { "ledger." + table }
    package static func shadow(_ table: String) -> String { "ledger." + table + suffix }

    /// Drops what a rebuild left behind when it died: its shadows, and the tables its swap
    /// retired (the live tables are not touched).
    package func dropLeftovers(on c: PostgresConnection) throws {
        try c.query("DROP TABLE IF EXISTS " + Self.tables.map(Self.shadow).joined(separator: ", "))
        try dropRetired(on: c)
    }

    /// Throws, naming them, when objects outside a read model depend on it: the swap
    /// cannot carry them over to the new table.
    package func refuseUnknownDependents(on c: PostgresConnection) throws {
        for table in Self.tables {
            let found = try c.query(Self.dependentsSQL, [.text(Self.live(table))])
            let names = try (0..<found.count).map { try found.string($0, "dependent") }
            if !names.isEmpty { throw ShadowTablesError.dependents(table: Self.live(table), names) }
        }
    }

    /// Creates each shadow like its live table, with its key constraints (a rebuild
    /// upserts by key) but without its other indexes (`createIndexes`).
    package func create(on c: PostgresConnection) throws {
        for table in Self.tables {
            for statement in try statements(Self.creationSQL, table, on: c) { try c.query(statement) }
        }
    }

    /// Empties the shadows: what lets the fill that follows, in the same transaction, load
    /// them with COPY FREEZE though they were made in a transaction of their own.
    package func truncate(on c: PostgresConnection) throws {
        try c.query("TRUNCATE " + Self.tables.map(Self.shadow).joined(separator: ", "))
    }

    /// Builds the live tables' other indexes on the shadows, under the same names
    /// with the suffix: once the rows are in (one sorted build each, the fastest), or
    /// on the empty shadows (kept up row by row as they fill, in the fill's own bursts).
    package func createIndexes(on c: PostgresConnection) throws {
        for table in Self.tables {
            let found = try c.query(Self.indexSQL, [.text(Self.live(table))])
            for r in 0..<found.count {
                let name = try found.string(r, "name"), definition = try found.string(r, "definition")
                // pg_get_indexdef names the table qualified unless the search path holds its schema.
                let to = " \(name)\(Self.suffix) ON \(Self.shadow(table)) USING "
                guard let from = [Self.live(table), table].map({ " \(name) ON \($0) USING " }).first(where: definition.contains) else {
                    throw ShadowTablesError.unexpectedIndex(definition)
                }
                try c.query(definition.replacingFirst(from, with: to))
                if let comment = try found.value(r, "comment") {
                    try c.query("COMMENT ON INDEX ledger.\(name)\(Self.suffix) IS " + Self.literal(comment))
                }
            }
        }
    }

    /// Gathers the shadows' planner statistics, for the queries that follow the swap.
    package func analyze(on c: PostgresConnection) throws {
        for table in Self.tables { try c.query("ANALYZE " + Self.shadow(table)) }
    }

    /// In the caller's transaction: waits (as long as its lock_timeout lets it) for the
    /// live tables' readers, then renames them (and their indexes) out of the way with the
    /// suffix `_old`, and the shadows (and theirs) into their places. Catalog changes only,
    /// committed at once or not at all; the old tables are dropped after (`dropRetired`),
    /// outside the swap, so the commit does not wait for their files to go.
    package func swap(on c: PostgresConnection) throws {
        try c.query("LOCK TABLE " + Self.tables.map(Self.live).joined(separator: ", ") + " IN ACCESS EXCLUSIVE MODE")
        for table in Self.tables {
            try rename(Self.live(table), to: table + Self.retiredSuffix, indexes: { $0 + Self.retiredSuffix }, on: c)
            try rename(Self.shadow(table), to: table, indexes: { name in
                name.hasSuffix(Self.suffix) ? String(name.dropLast(Self.suffix.count)) : name
            }, on: c)
        }
    }

    /// Drops the tables a swap retired.
    package func dropRetired(on c: PostgresConnection) throws {
        try c.query("DROP TABLE IF EXISTS " + Self.tables.map { Self.live($0) + Self.retiredSuffix }.joined(separator: ", "))
    }

    package static let retiredSuffix = "_old"

    private func rename(_ table: String, to name: String, indexes newName: (String) -> String, on c: PostgresConnection) throws {
        let indexes = try c.query("""
            SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
             WHERE x.indrelid = $1::regclass ORDER BY 1
            """, [.text(table)])
        try c.query("ALTER TABLE \(table) RENAME TO \(name)")
        for r in 0..<indexes.count {
            let index = try indexes.string(r, "name")
            if newName(index) != index { try c.query("ALTER INDEX ledger.\(index) RENAME TO \(newName(index))") }
        }
    }

    /// Runs a query whose rows are statements (built by PostgreSQL's own `format`, so every
    /// name and value is quoted as it should be), with $1 the live table and $2 its shadow.
    private func statements(_ sql: String, _ table: String, on c: PostgresConnection) throws -> [String] {
        let found = try c.query(sql, [.text(Self.live(table)), .text(Self.shadow(table))])
        return try (0..<found.count).map { try found.string($0, "statement") }
    }

    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The statements that make $2 like $1, in order: the table (columns, defaults, check
    /// constraints, storage, compression, column comments), its options, statistics
    /// targets, comment, owner, grants (the owner's own are implicit), and key constraints.
    static let creationSQL = """
        WITH live AS (SELECT c.oid, c.relowner, c.reloptions FROM pg_class c WHERE c.oid = $1::regclass)
        SELECT 1 AS step, format('CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMPRESSION INCLUDING COMMENTS INCLUDING GENERATED INCLUDING IDENTITY)', $2::text, $1::text) AS statement
        UNION ALL
        SELECT 2, format('ALTER TABLE %s SET (%s)', $2::text, array_to_string(reloptions, ', ')) FROM live WHERE reloptions IS NOT NULL
        UNION ALL
        SELECT 3, format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', $2::text, a.attname, a.attstattarget)
          FROM pg_attribute a, live WHERE a.attrelid = live.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
        UNION ALL
        SELECT 4, format('COMMENT ON TABLE %s IS %L', $2::text, obj_description(live.oid, 'pg_class')) FROM live
         WHERE obj_description(live.oid, 'pg_class') IS NOT NULL
        UNION ALL
        SELECT 5, format('ALTER TABLE %s OWNER TO %I', $2::text, pg_get_userbyid(relowner)) FROM live
         WHERE pg_get_userbyid(relowner) <> current_user
        UNION ALL
        SELECT 6, format('GRANT %s ON %s TO %s%s', a.privilege_type, $2::text,
                         CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                         CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
          FROM pg_class c, aclexplode(c.relacl) a, live WHERE c.oid = live.oid AND a.grantee <> live.relowner
        UNION ALL
        SELECT 7, format('ALTER TABLE %s ADD CONSTRAINT %I %s', $2::text, k.conname || '\(suffix)', pg_get_constraintdef(k.oid))
          FROM pg_constraint k, live WHERE k.conrelid = live.oid AND k.contype IN ('p', 'u', 'x')
        ORDER BY 1
        """

    /// The live table's indexes that no constraint owns, as PostgreSQL would create them.
    static let indexSQL = """
        SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS definition,
               obj_description(x.indexrelid, 'pg_class') AS comment
          FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = $1::regclass
           AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid)
         ORDER BY i.relname
        """

    /// Everything that depends on the table, or on its row type, other than what the
    /// shadow is made with (its columns' indexes and constraints, its TOAST table and
    /// types), and row-level security, which lives in the table's own row.
    static let dependentsSQL = """
        WITH live AS (SELECT c.oid, c.reltype, c.reltoastrelid, c.relrowsecurity FROM pg_class c WHERE c.oid = $1::regclass)
        SELECT DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid) AS dependent
          FROM pg_depend d, live
         WHERE ((d.refclassid = 'pg_class'::regclass AND d.refobjid = live.oid)
                OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = live.reltype))
           AND NOT (d.classid = 'pg_class'::regclass
                    AND (d.objid = live.reltoastrelid OR d.objid IN (SELECT indexrelid FROM pg_index WHERE indrelid = live.oid)))
           AND NOT (d.classid = 'pg_constraint'::regclass
                    AND d.objid IN (SELECT oid FROM pg_constraint WHERE conrelid = live.oid AND contype IN ('c', 'p', 'u', 'x')))
           AND NOT (d.classid = 'pg_type'::regclass
                    AND (d.objid = live.reltype OR d.objid IN (SELECT typarray FROM pg_type WHERE oid = live.reltype)))
        UNION
        SELECT 'row-level security' FROM live WHERE relrowsecurity
        """
}

/// Why the shadow tables could not be made or swapped, in words an operator can act on.
package enum ShadowTablesError: Error, CustomStringConvertible {
    case dependents(table: String, [String])
    case unexpectedIndex(String)

    package var description: String {
        switch self {
        case .dependents(let table, let names):
            return "\(names.joined(separator: ", ")) depend(s) on \(table), and a rebuild's swap would drop them with the old table; "
                + "drop them, or teach ShadowTables to carry them over; nothing was rebuilt"
        case .unexpectedIndex(let definition):
            return "cannot rebuild this index on the new table: \(definition); nothing was rebuilt"
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}

/** The store's lifecycle port: schema, demo data, readiness and shutdown. Types only. */

export interface StoreLifecycle {
  /**
   * Creates or upgrades the schema. Idempotent, keeps the data, and safe when several
   * processes start together (each migration is applied once). Every other method of
   * the store may be called only after it resolved.
   */
  migrate(): Promise<void>;
  /**
   * Loads the deterministic demo data set (accounts `demo` and `acme`, their orders and
   * events, the social graph) once: when the store has no graph data yet (accounts may
   * exist already, e.g. made by `npm run token`). Returns true if this call loaded it;
   * of processes calling it together on an empty store, exactly one does.
   */
  seedDemo(): Promise<boolean>;
  /** True when the backing engine answers a trivial query; false (never a rejection) when not, closed included. */
  ping(): Promise<boolean>;
  /**
   * The deployment's id: random, made by the migration that created it, and the same for every
   * process on this database (and schema) ever after. What tells two deployments apart where
   * they share something else (a Redis: deployment.ts).
   */
  deploymentId(): Promise<string>;
  /** Releases the engine (file handle, pool). Idempotent. */
  close(): Promise<void>;
}

import type { ModuleContext } from '../../platform/context.js';

/** Audit uses nothing of other modules: it reads the platform's audit log. */
export type AuditContext = ModuleContext<Record<string, never>>;

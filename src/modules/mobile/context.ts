import type { ModuleContext } from '../../platform/context.js';
import type { Tx } from '../../platform/db/index.js';
import type { DeviceService, NotificationService, PushGateway } from '../notifications/index.js';
import type { SyncRegistry } from './service/sync.js';

/** The brand the apps show. */
export interface OrganizationBrand {
  id: string;
  name: string;
  slug: string;
  primary_color: string | null;
  secondary_color: string | null;
  logo_object_id: string | null;
}

/** What mobile uses of other modules, given by the composition root. */
export type MobileContext = ModuleContext<{
  /** The organization's brand for the apps (organizations; declared here: organizations reaches mobile through logistics). */
  organizations: { branding(tx: Tx): Promise<OrganizationBrand | undefined> };
  /** The offline sync registry (the composition root creates it; logistics and commerce add to it too). */
  sync: SyncRegistry;
  devices: DeviceService;
  notifications: NotificationService;
  pushGateway: PushGateway | null;
  realtime: { readonly connectionCount: number };
}>;

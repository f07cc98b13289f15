import type { Module } from '../../platform/context.js';
import { notificationsModule } from '../notifications/index.js';
import { mobileModule } from '../mobile/index.js';
import { realtimeModule } from './index.js';

/** The modules of issue 7, in dependency order: inbox and devices, then mobile contract and sync, then streams. */
export const realtimeModules: Module[] = [notificationsModule, mobileModule, realtimeModule];

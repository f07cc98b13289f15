import type { Transitions } from '../../../platform/state-machine.js';
import type { ApprovalStatus, TripStatus } from '../schemas.js';

/**
 * The trip state machine. `assigned → assigned` and `accepted → assigned` are reassignments;
 * `assigned|accepted → pending` is a driver reject or a dispatch unassign.
 * A failed delivery (`in_transit`, the driver could not hand over) goes, as the organization's
 * `failed_delivery_policy` says, to `returning` (the driver brings the goods back; `returned` when the
 * merchant confirms with the pickup PIN) or straight to `failed`. returned and failed are terminal.
 */
export const TRIP_TRANSITIONS: Transitions<TripStatus> = {
  pending: ['assigned', 'cancelled'],
  assigned: ['assigned', 'accepted', 'pending', 'cancelled'],
  accepted: ['assigned', 'picked_up', 'pending', 'cancelled'],
  picked_up: ['in_transit', 'cancelled'],
  in_transit: ['completed', 'cancelled', 'returning', 'failed'],
  completed: [],
  cancelled: [],
  returning: ['returned'],
  returned: [],
  failed: [],
};

/** What `POST /trips/:id/status` may do: unassign (back to pending), cancel, record a failed delivery and close its return; the rest have their own operations and proofs. */
export const DISPATCH_TRANSITIONS: Transitions<TripStatus> = {
  pending: ['cancelled'],
  assigned: ['pending', 'cancelled'],
  accepted: ['pending', 'cancelled'],
  picked_up: ['cancelled'],
  // A failed delivery reported by phone (returning or failed, dispatch decides; `failure_reason` required).
  in_transit: ['cancelled', 'returning', 'failed'],
  completed: [],
  cancelled: [],
  // The merchant confirmed he has the goods back (no PIN: dispatch answers for it, audited).
  returning: ['returned'],
  returned: [],
  failed: [],
};

/** States in which a trip occupies one unit of its driver's capacity. */
export const ACTIVE_STATUSES: TripStatus[] = ['assigned', 'accepted', 'picked_up', 'in_transit', 'returning'];
export const TERMINAL_STATUSES: TripStatus[] = ['completed', 'cancelled', 'returned', 'failed'];

/**
 * Drivers and merchants: pending → approved | rejected; approved → suspended → approved (reactivate).
 * Rejected is final. Every query that hands out work asks for `status = 'approved'`, so a suspended
 * driver gets no trips and a suspended merchant no orders or trips without further checks.
 */
export const APPROVAL_TRANSITIONS: Transitions<ApprovalStatus> = {
  pending: ['approved', 'rejected'],
  approved: ['suspended'],
  suspended: ['approved'],
  rejected: [],
};

export type ApprovalAction = 'approve' | 'reject' | 'suspend' | 'reactivate';

/** Each operation names the state it starts from, so `approve` does not double as `reactivate`. */
export const APPROVAL_ACTIONS: Record<ApprovalAction, { from: ApprovalStatus; to: ApprovalStatus }> = {
  approve: { from: 'pending', to: 'approved' },
  reject: { from: 'pending', to: 'rejected' },
  suspend: { from: 'approved', to: 'suspended' },
  reactivate: { from: 'suspended', to: 'approved' },
};

/** Wrong PIN attempts that lock a verification until dispatch resets it. */
export const PIN_MAX_ATTEMPTS = 5;

package dev.sas.examples.orders;

import dev.sas.core.StepContext;

/**
 * The compensation of the order's first step, {@link OrderWorkflow#OPEN_ORDER}, which runs last
 * when an order fails: it releases every reservation, refunds every open charge and cancels every
 * live shipment of the order once more. Both calls are idempotent and undo nothing that was already undone.
 *
 * <p>Why: when one parallel branch fails for good, the other is cancelled. A branch cancelled while
 * its call was in flight (a parallel branch, a parcel of the fan-out) may have reserved, charged or shipped at the service without its step being
 * recorded as completed, and the parallel step compensates completed steps only; the order would
 * keep stock or money. The ledger check "every charge of a failed order refunded once and no
 * reservation left held" caught this (about one run in four, one order); the sweep closes it until
 * the library compensates a cancelled branch's in-flight step itself. Stateless.
 */
final class FailedOrderSweep {

    private FailedOrderSweep() {
    }

    /** Releases the order's stock, refunds its charges, cancels its parcels, each under its own idempotency key. */
    static void undo(StepContext<Order> ctx, OrderWorkflow.Agents agents) throws Exception {
        String orderId = ctx.input().orderId();
        agents.inventory().callNow(ServiceCall.post("/release", "orderId", orderId), ctx.idempotencyKey() + "/release",
                OrderWorkflow.STEP_DEADLINE);
        agents.payment().callNow(ServiceCall.post("/refund", "orderId", orderId), ctx.idempotencyKey() + "/refund",
                OrderWorkflow.STEP_DEADLINE);
        agents.shipping().callNow(ServiceCall.post("/cancel", "orderId", orderId), ctx.idempotencyKey() + "/cancel",
                OrderWorkflow.STEP_DEADLINE);
    }
}

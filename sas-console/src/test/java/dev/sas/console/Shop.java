package dev.sas.console;

import dev.sas.core.Codec;
import dev.sas.core.NonRetryableException;
import dev.sas.core.StepRef;
import dev.sas.core.Workflow;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The workflows the console tests look at: orders (reserve, charge, ship) whose reserve step fails
 * for good while the warehouse blocks an SKU, so a task ends in ERROR until an operator resubmits
 * it; and refunds, a second workflow for the counts.
 */
final class Shop {
    static final StepRef<String> RESERVE = StepRef.of("reserve");
    static final StepRef<String> CHARGE = StepRef.of("charge");
    static final StepRef<String> SHIP = StepRef.of("ship");
    /** An order for this SKU fails at reserve while {@link #blocked} is set. */
    static final String BLOCKED_SKU = "sku-blocked";

    final AtomicBoolean blocked = new AtomicBoolean(true);

    final Workflow<String> orders = Workflow.builder("orders", Codec.string()).compensateOnFailure(false)
            .step(RESERVE, s -> s.execute(ctx -> {
                if (ctx.input().equals(BLOCKED_SKU) && blocked.get()) {
                    throw new NonRetryableException("warehouse refused " + BLOCKED_SKU + ": SKU is blocked");
                }
                return "reservation-" + ctx.input();
            }))
            .step(CHARGE, s -> s.execute(ctx -> "payment <b>42</b>"))
            .step(SHIP, s -> s.execute(ctx -> "shipment-7"))
            .build();

    final Workflow<String> refunds = Workflow.builder("refunds", Codec.string())
            .step("refund", s -> s.execute(ctx -> "refunded " + ctx.input()))
            .build();
}

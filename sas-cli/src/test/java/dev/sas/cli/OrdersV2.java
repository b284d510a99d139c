package dev.sas.cli;

import dev.sas.core.Codec;
import dev.sas.core.Workflow;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/** The application's workflows as {@code sas tasks move --workflows} loads them: orders v2. */
public class OrdersV2 implements Supplier<Collection<Workflow<?>>> {

    /** Orders v2: "reserve" became "reserve-v2", which no warehouse refuses. */
    static final Workflow<String> ORDERS_V2 = Workflow.builder("orders", Codec.string()).version(2)
            .step("reserve-v2", s -> s.execute(ctx -> "v2 reservation " + ctx.input()))
            .step("ship", s -> s.execute(ctx -> "v2 shipment"))
            .movesFrom(1, m -> m.step("reserve", "reserve-v2"))
            .build();

    @Override
    public Collection<Workflow<?>> get() {
        return List.of(ORDERS_V2);
    }
}

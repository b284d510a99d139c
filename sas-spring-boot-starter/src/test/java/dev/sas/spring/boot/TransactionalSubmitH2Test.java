package dev.sas.spring.boot;

import java.util.concurrent.ThreadLocalRandom;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link TransactionalSubmitContract} on an in-memory H2 database. */
@SpringBootTest(classes = TransactionalSubmitContract.ShopApplication.class)
class TransactionalSubmitH2Test extends TransactionalSubmitContract {

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry r) {
        r.add("spring.datasource.url", () -> "jdbc:h2:mem:shop" + ThreadLocalRandom.current().nextInt(1 << 30)
                + ";DB_CLOSE_DELAY=-1");
        r.add("sas.scheduler.poll-interval", () -> "1h");
        r.add("shop.orders-table", () -> "shop_orders");
    }
}

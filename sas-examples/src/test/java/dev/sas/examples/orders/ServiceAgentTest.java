package dev.sas.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sas.core.AgentRequest;
import dev.sas.core.NonRetryableException;
import dev.sas.core.TaskId;
import dev.sas.examples.orders.services.Faults;
import dev.sas.examples.orders.services.Form;
import dev.sas.examples.orders.services.PaymentService;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ServiceAgentTest {

    private static AgentRequest<ServiceCall> request(String key, Duration timeout, ServiceCall call) {
        return new AgentRequest<>(TaskId.random(), "charge-payment", 1, key, Instant.now().plus(timeout), timeout, call);
    }

    private static String send(ServiceAgent agent, AgentRequest<ServiceCall> r) throws Exception {
        try {
            return agent.call(r).toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void a_retried_charge_with_the_same_idempotency_key_is_applied_once() throws Exception {
        try (PaymentService payment = new PaymentService(Faults.none("payment"))) {
            payment.start();
            ServiceAgent agent = new ServiceAgent("payment", payment.uri(), HttpClient.newHttpClient());
            ServiceCall charge = ServiceCall.post("/charge", "orderId", "A-00001", "amountCents", "1250");

            String first = send(agent, request("key-1", Duration.ofSeconds(5), charge));
            String again = send(agent, request("key-1", Duration.ofSeconds(5), charge));

            assertThat(again).isEqualTo(first);
            assertThat(Form.decode(first)).containsKey("chargeId");
            assertThat(payment.charges("A-00001")).hasSize(1);
            assertThat(payment.replayed()).isEqualTo(1);
        }
    }

    @Test
    void a_declined_card_is_not_retryable_and_an_unavailable_service_is() throws Exception {
        Faults faults = new Faults("payment", 7).permanentSlice(0, 1).failureRate(1).faultyCallsPerKey(1);
        try (PaymentService payment = new PaymentService(faults)) {
            payment.start();
            ServiceAgent agent = new ServiceAgent("payment", payment.uri(), HttpClient.newHttpClient());
            ServiceCall charge = ServiceCall.post("/charge", "orderId", "A-00002", "amountCents", "990");

            assertThatThrownBy(() -> send(agent, request("key-2", Duration.ofSeconds(5), charge)))
                    .isInstanceOf(RemoteServiceException.class).hasMessageContaining("HTTP 503");
            assertThatThrownBy(() -> send(agent, request("key-2", Duration.ofSeconds(5), charge)))
                    .isInstanceOf(NonRetryableException.class).hasMessageContaining("HTTP 402");
            assertThat(ServiceAgent.RETRY.isNonRetryable(new RemoteServiceException("503", 503))).isFalse();
            assertThat(payment.charges("A-00002")).isEmpty();

            faults.liftPermanentFaults();
            assertThat(send(agent, request("key-2", Duration.ofSeconds(5), charge))).contains("chargeId");
        }
    }

    @Test
    void a_call_that_hangs_times_out_at_the_steps_deadline() throws Exception {
        Faults faults = new Faults("payment", 7).hangs(1, Duration.ofSeconds(5));
        try (PaymentService payment = new PaymentService(faults)) {
            payment.start();
            ServiceAgent agent = new ServiceAgent("payment", payment.uri(), HttpClient.newHttpClient());
            ServiceCall charge = ServiceCall.post("/charge", "orderId", "A-00003", "amountCents", "990");

            assertThatThrownBy(() -> send(agent, request("key-3", Duration.ofMillis(300), charge)))
                    .isInstanceOf(HttpTimeoutException.class);
            // the service records the charge on its own thread: on a busy machine after the client gave up
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(payment.charges("A-00003")).as("the work was done, only the reply was lost").hasSize(1));
        }
    }
}

package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The partition proxy against an echo server standing in for the database: a cut holds bytes in
 * the directions it cuts and passes the others; healing delivers what was held.
 */
class DbProxyTest {
    /** How long a read that must be held waits: a busy machine can only make it pass, never fail. */
    private static final int HELD = 300;

    private ServerSocket upstream;
    private final AtomicInteger received = new AtomicInteger();
    private DbProxy proxy;

    @BeforeEach
    void echoServer() throws IOException {
        upstream = new ServerSocket();
        upstream.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(() -> {
            try (Socket s = upstream.accept(); InputStream in = s.getInputStream()) {
                int b;
                while ((b = in.read()) >= 0) {
                    received.incrementAndGet();
                    s.getOutputStream().write(b);
                    s.getOutputStream().flush();
                }
            } catch (IOException e) {
                // closed
            }
        }, "echo");
        t.setDaemon(true);
        t.start();
        proxy = new DbProxy("127.0.0.1", upstream.getLocalPort(), "test");
    }

    @AfterEach
    void close() throws IOException {
        proxy.close();
        upstream.close();
    }

    /** Reads that must succeed wait up to 10 s (a starved machine); reads that must be held, {@link #HELD}. */
    private Socket connect() throws IOException {
        Socket s = new Socket("127.0.0.1", proxy.localPort());
        s.setSoTimeout(10_000);
        return s;
    }

    @Test
    void passes_bytes_both_ways_until_cut() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write('a');
            assertThat(s.getInputStream().read()).isEqualTo('a');
            assertThat(proxy.connections()).isEqualTo(1);
        }
    }

    @Test
    void a_cut_from_the_database_lets_the_statement_arrive_and_holds_its_answer_until_healed() throws IOException {
        try (Socket s = connect()) {
            proxy.cut(DbProxy.Cut.FROM_DB);
            s.getOutputStream().write('b');
            await().atMost(Duration.ofSeconds(10)).until(() -> received.get() == 1);
            s.setSoTimeout(HELD);
            assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            proxy.heal();
            s.setSoTimeout(10_000);
            assertThat(s.getInputStream().read()).isEqualTo('b');
        }
    }

    @Test
    void a_cut_both_ways_or_to_the_database_holds_the_statement_until_healed() throws IOException {
        try (Socket s = connect()) {
            s.getOutputStream().write('c');
            assertThat(s.getInputStream().read()).isEqualTo('c');
            for (DbProxy.Cut cut : new DbProxy.Cut[] {DbProxy.Cut.BOTH, DbProxy.Cut.TO_DB}) {
                proxy.cut(cut);
                s.getOutputStream().write('d');
                s.setSoTimeout(HELD);
                assertThatThrownBy(() -> s.getInputStream().read()).as(cut.label())
                        .isInstanceOf(SocketTimeoutException.class);
                assertThat(received.get()).as(cut.label() + ": nothing reached the database").isEqualTo(1);
                proxy.heal();
                s.setSoTimeout(10_000);
                assertThat(s.getInputStream().read()).isEqualTo('d');
                assertThat(received.get()).isEqualTo(2);
                received.set(1);
            }
        }
    }

    @Test
    void rewrites_a_single_host_url_to_the_proxy() {
        assertThat(proxy.rewrite("jdbc:postgresql://127.0.0.1:5432/sas_faults?user=postgres"))
                .isEqualTo("jdbc:postgresql://127.0.0.1:" + proxy.localPort() + "/sas_faults?user=postgres");
        assertThat(proxy.rewrite("jdbc:mariadb://localhost/db")).isEqualTo("jdbc:mariadb://127.0.0.1:"
                + proxy.localPort() + "/db");
        assertThatThrownBy(() -> proxy.rewrite("jdbc:postgresql://h1:1,h2:2/db"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}

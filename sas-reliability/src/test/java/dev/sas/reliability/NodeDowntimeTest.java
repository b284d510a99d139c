package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.reliability.ChaosChecks.Outage;
import org.junit.jupiter.api.Test;

class NodeDowntimeTest {

    @Test
    void only_the_windows_in_which_every_worker_was_down_hold_the_tasks() {
        NodeDowntime d = new NodeDowntime(3);
        d.down(0, 1_000); // killed, its next incarnation reports at 5,000
        d.up(0, 5_000);
        d.down(1, 2_000); // frozen until 4,000
        d.up(1, 4_000);
        d.downFor(2, 3_000, 3_500); // froze itself at a fault point
        d.down(2, 3_800); // cut off until 6,000
        d.up(2, 6_000);

        assertThat(d.allDown(10_000)).containsExactly(new Outage(3_000, 3_500), new Outage(3_800, 4_000));
    }

    @Test
    void a_window_still_open_ends_now_and_one_worker_up_is_enough() {
        NodeDowntime d = new NodeDowntime(2);
        d.down(0, 1_000);
        d.down(1, 2_000);
        assertThat(d.isDown(0)).isTrue();

        assertThat(d.allDown(3_000)).containsExactly(new Outage(2_000, 3_000));
        d.up(1, 2_500);
        assertThat(d.allDown(3_000)).containsExactly(new Outage(2_000, 2_500));
        d.up(0, 2_800);
        assertThat(d.isDown(0)).isFalse();
        assertThat(new NodeDowntime(2).allDown(3_000)).isEmpty();
    }
}

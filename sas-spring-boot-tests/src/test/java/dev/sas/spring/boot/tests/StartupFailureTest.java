package dev.sas.spring.boot.tests;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.Codec;
import dev.sas.core.Workflow;
import dev.sas.spring.boot.SasStartupException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/** With the starter on the class path and no way to configure SAS, the application does not start. */
class StartupFailureTest {

    /** An application with a workflow and no data source. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class NoDatabase {
        @Bean
        Workflow<String> greet() {
            return Workflow.builder("greet", Codec.string()).step("hello", s -> s.execute(ctx -> "hi")).build();
        }
    }

    @Test
    void without_a_data_source_the_application_fails_at_start_saying_what_to_add() {
        String boot4 = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";
        String dataSourceAutoConfiguration = ClassUtils.isPresent(boot4, null) ? boot4
                : "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration";
        SpringApplicationBuilder app = new SpringApplicationBuilder(NoDatabase.class)
                .properties("spring.main.web-application-type=none",
                        "spring.autoconfigure.exclude=" + dataSourceAutoConfiguration);
        assertThatThrownBy(app::run).isInstanceOf(SasStartupException.class)
                .hasMessageContaining("found no DataSource bean and no StateStore bean")
                .hasMessageContaining("sas.enabled=false");
    }
}

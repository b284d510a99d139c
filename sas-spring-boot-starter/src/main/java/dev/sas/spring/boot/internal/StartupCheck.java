package dev.sas.spring.boot.internal;

import dev.sas.core.SasClient;
import dev.sas.core.spi.StateStore;
import dev.sas.spring.boot.SasStartupException;
import java.util.Arrays;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.SpringBootVersion;
import org.springframework.util.ClassUtils;

/**
 * Once every singleton exists, fails the start with a {@link SasStartupException} when the
 * starter made no {@link SasClient} although {@code sas.enabled} is not false, naming what is
 * missing and what to add. The usual cause on Spring Boot 4 is an application without
 * {@code spring-boot-starter-jdbc}: the {@code DataSource} auto-configuration moved there. Not API.
 */
public final class StartupCheck implements SmartInitializingSingleton, BeanClassLoaderAware {

    static final String BOOT4_DATA_SOURCE_AUTO_CONFIGURATION =
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration";
    static final String BOOT3_DATA_SOURCE_AUTO_CONFIGURATION =
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration";
    private static final String OFF = " Or set sas.enabled=false to run this application without SAS.";

    private final ListableBeanFactory beans;
    private ClassLoader classLoader = StartupCheck.class.getClassLoader();

    /** @param beans the application's beans */
    public StartupCheck(ListableBeanFactory beans) {
        this.beans = beans;
    }

    @Override
    public void setBeanClassLoader(ClassLoader classLoader) {
        this.classLoader = classLoader;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (beans.getBeanNamesForType(SasClient.class).length == 0) {
            throw diagnose();
        }
    }

    /** @return why no client was made, and what to do */
    SasStartupException diagnose() {
        String boot = "Spring Boot " + SpringBootVersion.getVersion();
        String[] stores = beans.getBeanNamesForType(StateStore.class);
        String[] dataSources = beans.getBeanNamesForType(DataSource.class);
        if (stores.length == 0 && dataSources.length == 0) {
            boolean boot4Jdbc = ClassUtils.isPresent(BOOT4_DATA_SOURCE_AUTO_CONFIGURATION, classLoader);
            boolean boot3Jdbc = ClassUtils.isPresent(BOOT3_DATA_SOURCE_AUTO_CONFIGURATION, classLoader);
            String add = boot4Jdbc || boot3Jdbc
                    ? "Set spring.datasource.url (and put the database's JDBC driver on the class path)"
                    : "Add spring-boot-starter-jdbc (or spring-boot-starter-data-jpa): on Spring Boot 4 the DataSource"
                            + " auto-configuration is in spring-boot-jdbc, no longer in spring-boot-autoconfigure."
                            + " Then set spring.datasource.url";
            return new SasStartupException("sas-spring-boot-starter is on the class path of this " + boot
                    + " application but found no DataSource bean and no StateStore bean, so it configured no"
                    + " SasClient or SasRuntime.", add + ", or define a DataSource or StateStore bean." + OFF);
        }
        if (stores.length == 0 && dataSources.length > 1) {
            return new SasStartupException("sas-spring-boot-starter found " + dataSources.length + " DataSource beans "
                    + Arrays.toString(dataSources) + " in this " + boot + " application and none is primary, so it"
                    + " does not know which one holds SAS's tables.", "Mark that one @Primary, or define a StateStore"
                    + " bean on it (JdbcStateStore.builder().dataSource(...).build())." + OFF);
        }
        return new SasStartupException("sas-spring-boot-starter made no SasClient in this " + boot + " application"
                + " (StateStore beans " + Arrays.toString(stores) + ", DataSource beans " + Arrays.toString(dataSources)
                + ").", "Run with --debug to see the conditions report of SasAutoConfiguration, or define a SasClient bean."
                + OFF);
    }
}

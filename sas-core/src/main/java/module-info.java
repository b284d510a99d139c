/**
 * SAS core: the public API ({@code dev.sas.core}) and the SPI for stores ({@code dev.sas.core.spi}).
 * Everything in {@code dev.sas.core.internal} is implementation and not exported, except to
 * {@code sas-testing}, whose {@code Drain} runs one pass of a runtime by hand through it.
 */
module dev.sas.core {
    requires org.slf4j;
    requires com.cronutils;

    exports dev.sas.core;
    exports dev.sas.core.spi;
    exports dev.sas.core.internal to dev.sas.testing;
}

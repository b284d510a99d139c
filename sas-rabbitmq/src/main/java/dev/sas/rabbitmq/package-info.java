/**
 * RabbitMQ for SAS: {@link dev.sas.rabbitmq.RabbitReplyChannel}, a reply channel that publishes each
 * task's status messages to a broker with publisher confirms, and {@link dev.sas.rabbitmq.RabbitConnection},
 * the connection it (and whatever else talks to the broker) shares.
 */
package dev.sas.rabbitmq;

/** Implementation of the RabbitMQ integration. Not API: anything here may change without notice. */
package dev.sas.rabbitmq.internal;

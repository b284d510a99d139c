/**
 * RabbitMQ for SAS. Remote agents behind a queue, as in the pattern's figure:
 * {@link dev.sas.rabbitmq.RabbitAgent} sends an awaiting step's request to the agent's queue,
 * {@link dev.sas.rabbitmq.AgentWorker} (in the agent's own processes) calls the service and publishes
 * the reply, and {@link dev.sas.rabbitmq.RabbitAgentReplyConsumer} completes the step with it on any node.
 * Status channels: {@link dev.sas.rabbitmq.RabbitStatusChannel} publishes each task's status messages
 * to a broker with publisher confirms. {@link dev.sas.rabbitmq.RabbitConnection} is the connection
 * they all share.
 */
package dev.sas.rabbitmq;

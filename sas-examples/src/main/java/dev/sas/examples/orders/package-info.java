/**
 * The order-processing example: a web shop places orders, and a SAS workflow reserves stock,
 * charges the payment, books shipping and confirms each order across unreliable remote services,
 * so that every order ends processed, or compensated and reported. Start with
 * {@link dev.sas.examples.orders.OrderWorkflow} (the workflow), {@link dev.sas.examples.orders.ServiceAgent}
 * (the agents) and {@link dev.sas.examples.orders.OrderDatabase#place} (transactional submission);
 * {@link dev.sas.examples.orders.OrderProcessingApp} runs it all.
 */
package dev.sas.examples.orders;

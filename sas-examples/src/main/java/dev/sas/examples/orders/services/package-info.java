/**
 * The remote systems of the example web shop — warehouse, payment provider, carrier — as small
 * HTTP services on {@code 127.0.0.1} with their own ledgers, idempotency keys and configurable
 * faults. They stand in for the services a real application does not control.
 */
package dev.sas.examples.orders.services;

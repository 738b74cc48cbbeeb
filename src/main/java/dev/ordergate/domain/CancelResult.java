package dev.ordergate.domain;

public record CancelResult(String orderNo, CancelOutcome outcome, OrderStatus status) {}

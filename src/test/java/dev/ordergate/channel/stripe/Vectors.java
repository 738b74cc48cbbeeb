package dev.ordergate.channel.stripe;

/** Test vectors computed outside Java (openssl dgst -sha256 -hmac). */
final class Vectors {
  static final String STRIPE = "4eab0e48ab19b335a5943b1ac2e00253669f19bf3446d0080081020056374bfa";

  private Vectors() {
  }
}

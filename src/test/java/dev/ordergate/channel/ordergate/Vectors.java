package dev.ordergate.channel.ordergate;

/** Test vectors computed outside Java (openssl dgst -sha256 -hmac). */
final class Vectors {
  static final String V2 = "0e5e63df009918809cc48bdbbc04f6a78d8acae5e48f2984311ac3028db78925";

  private Vectors() {
  }
}

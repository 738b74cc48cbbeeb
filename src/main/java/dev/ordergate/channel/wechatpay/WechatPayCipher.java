package dev.ordergate.channel.wechatpay;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;

/**
 * AEAD_AES_256_GCM of a notification's {@code resource}: key = the APIv3 key (32 bytes), IV = the
 * resource's {@code nonce}, AAD = its {@code associated_data}, ciphertext Base64 with the 16-byte tag
 * at its end. Pure functions.
 */
public final class WechatPayCipher {

  private static final int TAG_BITS = 128;

  private WechatPayCipher() {
  }

  /** @throws GeneralSecurityException when the key, nonce, AAD or tag do not match (tampered or not ours) */
  public static byte[] decrypt(byte[] apiV3Key, String nonce, String associatedData, String ciphertextBase64)
      throws GeneralSecurityException {
    byte[] ciphertext;
    try {
      ciphertext = Base64.getDecoder().decode(ciphertextBase64);
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("ciphertext is not Base64");
    }
    return cipher(Cipher.DECRYPT_MODE, apiV3Key, nonce, associatedData).doFinal(ciphertext);
  }

  public static String encrypt(byte[] apiV3Key, String nonce, String associatedData, byte[] plaintext) {
    try {
      return Base64.getEncoder().encodeToString(
          cipher(Cipher.ENCRYPT_MODE, apiV3Key, nonce, associatedData).doFinal(plaintext));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM encryption failed", e);
    }
  }

  private static Cipher cipher(int mode, byte[] key, String nonce, String associatedData) throws GeneralSecurityException {
    if (nonce == null || nonce.isEmpty()) {
      throw new GeneralSecurityException("resource nonce missing");
    }
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, nonce.getBytes(StandardCharsets.UTF_8)));
    if (associatedData != null && !associatedData.isEmpty()) {
      c.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
    }
    return c;
  }
}

package dev.ordergate.db;

import io.vertx.sqlclient.Tuple;

/**
 * Builds a Tuple one value per parameter. {@code Params.of(a, b)} would spread an array {@code b}
 * (an {@code Object...} overload) into many parameters; arrays here bind to one {@code text[]},
 * {@code int[]} or {@code bigint[]} parameter each.
 */
public final class Params {

  private Params() {
  }

  /** One array as the single parameter (a plain varargs call would spread it). */
  public static Tuple array(Object[] values) {
    return Tuple.tuple().addValue(values);
  }

  public static Tuple of(Object... values) {
    Tuple t = Tuple.tuple();
    for (Object v : values) {
      t.addValue(v);
    }
    return t;
  }
}

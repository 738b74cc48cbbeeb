package dev.ordergate.auth;

/**
 * Who makes an admin request, as established by its credentials (never by its body): an operator's
 * session, or the bearer admin token (automation, whose body may name the operator it acts for);
 * {@code client} is the peer address the request came from (a proxy's, behind one).
 */
public record Operator(String name, Via via, String client) {

  public enum Via { SESSION, TOKEN }

  /** The routing-context key under which the authorize step leaves the caller. */
  public static final String KEY = "ordergate.operator";
}

package dev.ordergate.db;

import io.vertx.pgclient.PgConnectOptions;

/** One database address in the two shapes we need: the reactive client's and JDBC's (Flyway). */
public record DbUrl(String uri) {

  public PgConnectOptions connectOptions() {
    return PgConnectOptions.fromUri(uri);
  }

  public String jdbcUrl() {
    PgConnectOptions o = connectOptions();
    return "jdbc:postgresql://" + o.getHost() + ":" + o.getPort() + "/" + o.getDatabase();
  }

  public String user() {
    return connectOptions().getUser();
  }

  public String password() {
    String p = connectOptions().getPassword();
    return p == null ? "" : p;
  }

  /** The same server, another database. */
  public DbUrl withDatabase(String database) {
    PgConnectOptions o = connectOptions();
    String auth = o.getUser() == null ? "" : o.getUser()
        + (o.getPassword() == null || o.getPassword().isEmpty() ? "" : ":" + o.getPassword()) + "@";
    return new DbUrl("postgresql://" + auth + o.getHost() + ":" + o.getPort() + "/" + database);
  }
}

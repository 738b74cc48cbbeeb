# Two-stage build of target/ordergate.jar. Not built on the development machines (no Docker
# engine there); kept correct by review.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
# Dependencies in their own layer, so a source change does not download them again.
RUN mvn -B -q dependency:go-offline
COPY src ./src
RUN mvn -B -q -DskipTests package

FROM eclipse-temurin:17-jre
RUN useradd --system --home /app ordergate
WORKDIR /app
COPY --from=build /src/target/ordergate.jar /app/ordergate.jar
COPY conf /app/conf
USER ordergate
EXPOSE 8080
# Give it a database: ORDERGATE_DB_URL=postgresql://user:password@host:5432/db (the embedded
# fallback is for a laptop, not for a container) and its credentials: ORDERGATE_API_KEYS, and a
# config (ORDERGATE_CONF) with real channels. With a database URL the service is in production
# mode and refuses the development-only channel and key of the conf/config.json copied here.
# Metrics and health are on the management listener (management.host/port, 127.0.0.1:8081 by
# default): for a Prometheus outside the container, bind management.host to the pod network in
# that config (never a public interface) and publish 8081 there only.
ENV ORDERGATE_JAVA_OPTS="-Xms64m -Xmx256m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m -Xss512k"
ENTRYPOINT ["sh", "-c", "exec java $ORDERGATE_JAVA_OPTS -jar /app/ordergate.jar \"$@\"", "--"]

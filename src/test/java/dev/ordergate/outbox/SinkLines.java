package dev.ordergate.outbox;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * The log sink's lines while open: its logger at DEBUG, each line's arguments (type, event id, order number,
 * payload) kept in the order they were written. Closing puts the logger back as it was.
 */
final class SinkLines implements AutoCloseable {

  /** One logged event. */
  record Line(String type, String eventId, String orderNo) {}

  private final Logger sink = (Logger) LoggerFactory.getLogger("dev.ordergate.outbox.LogSink");
  private final Level level = sink.getLevel();
  private final List<Line> lines = new ArrayList<>();
  private final AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent e) {
      Object[] args = e.getArgumentArray();
      synchronized (lines) {
        lines.add(new Line(String.valueOf(args[0]), String.valueOf(args[1]), String.valueOf(args[2])));
      }
    }
  };

  SinkLines() {
    capture.start();
    sink.addAppender(capture);
    sink.setLevel(Level.DEBUG);
  }

  /** The lines so far, in the order they were logged. */
  List<Line> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  @Override
  public void close() {
    sink.detachAppender(capture);
    sink.setLevel(level);
  }
}

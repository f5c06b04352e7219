package dev.vigilo.control;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A stand-in for a Vigilo command, run as its own JVM by the embedded-server tests:
 * {@code EmbeddedClientMain <directory> hold|serve|write <value>|read}. Prints {@code READY port=<p>
 * postmasterStart=<t>} once the database is open; "hold" then waits until stdin closes; "serve" answers each line of
 * stdin with {@code OK postmasterStart=<t>} (a query through its pool) or {@code FAIL <message>} until stdin closes;
 * "write" inserts a row, "read" prints {@code ROWS=<values>}. Prints {@code ERROR <message>} and exits 1 on failure.
 */
final class EmbeddedClientMain {

    private EmbeddedClientMain() {}

    public static void main(String[] args) throws Exception {
        Path directory = Path.of(args[0]);
        String command = args[1];
        try (ControlDatabase database = ControlDatabase.open(new ControlSettings.Embedded(directory))) {
            int port = database.jdbi()
                    .withHandle(h -> h.createQuery("SELECT inet_server_port()")
                            .mapTo(Integer.class)
                            .one());
            long started = database.jdbi()
                    .withHandle(
                            h -> h.createQuery("SELECT (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint")
                                    .mapTo(Long.class)
                                    .one());
            System.out.println("READY port=" + port + " postmasterStart=" + started);
            switch (command) {
                case "hold" -> {
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    while (in.readLine() != null) {
                        // wait for EOF
                    }
                }
                case "serve" -> {
                    // A long-running client (a worker, a dashboard): one query per line of stdin, until stdin closes.
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                    while (in.readLine() != null) {
                        try {
                            long start = database.jdbi()
                                    .withHandle(h -> h.createQuery("SELECT (extract(epoch FROM"
                                                    + " pg_postmaster_start_time()) * 1000)::bigint")
                                            .mapTo(Long.class)
                                            .one());
                            System.out.println("OK postmasterStart=" + start);
                        } catch (RuntimeException e) {
                            System.out.println(
                                    "FAIL " + String.valueOf(e.getMessage()).replace('\n', ' '));
                        }
                    }
                }
                case "write" ->
                    database.jdbi().useHandle(h -> {
                        h.execute("CREATE TABLE IF NOT EXISTS persisted (v text NOT NULL)");
                        h.execute("INSERT INTO persisted (v) VALUES (?)", args[2]);
                    });
                case "read" ->
                    System.out.println("ROWS="
                            + database.jdbi()
                                    .withHandle(h -> h.createQuery(
                                                    "SELECT coalesce(string_agg(v, ',' ORDER BY v), '') FROM persisted")
                                            .mapTo(String.class)
                                            .one()));
                default -> throw new IllegalArgumentException("unknown command " + command);
            }
        } catch (RuntimeException e) {
            System.out.println("ERROR " + e.getMessage().replace('\n', ' '));
            System.out.flush();
            System.exit(1);
        }
        System.out.println("CLOSED");
    }
}

package dev.vigilo.control;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * Builds the connection pool. Small, because a Vigilo process does little concurrent control-database work and
 * several processes share one server; quick to fail, because a wrong {@code --control-db} should be reported in
 * seconds, not after the driver's default timeouts.
 */
final class Pools {

    static final int MAX_POOL_SIZE = 4;
    static final int CONNECT_TIMEOUT_SECONDS = 5;

    private Pools() {}

    /**
     * Creates a pool and opens its first connection.
     *
     * @throws RuntimeException (Hikari's {@code PoolInitializationException}, whose cause is the driver's
     *                          {@code SQLException}) if no connection can be made
     */
    static HikariDataSource create(String jdbcUrl) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("vigilo-control");
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(MAX_POOL_SIZE);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(10_000);
        // Try once to connect, right now, so that open() reports an unreachable server instead of the first query.
        config.setInitializationFailTimeout(1);
        // Driver properties; parameters in the URL take precedence, so users can still override them there.
        config.addDataSourceProperty("connectTimeout", Integer.toString(CONNECT_TIMEOUT_SECONDS));
        config.addDataSourceProperty("loginTimeout", Integer.toString(2 * CONNECT_TIMEOUT_SECONDS));
        config.addDataSourceProperty("ApplicationName", "vigilo");
        config.addDataSourceProperty("tcpKeepAlive", "true");
        return new HikariDataSource(config);
    }
}

package dev.vigilo.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link CostBudget} on a real control database: calls are admitted while charged is below the limit, so any number
 * of spenders (here two budget objects, as two processes would hold, and eight threads) charge at most the limit
 * plus one reservation; settling replaces a reservation by the cost; a larger limit admits again; the row survives.
 */
class CostBudgetTest {
    @Test
    void concurrentSpendersChargeAtMostTheLimitPlusOneReservationAndALargerLimitAdmitsAgain() throws Exception {
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()))) {
            String key = CostBudget.key("test", "exp");
            BigDecimal reservation = new BigDecimal("0.03");
            BigDecimal cost = new BigDecimal("0.02");
            List<CostBudget> processes = List.of(
                    new CostBudget(db.jdbi(), key, "experiment exp", BigDecimal.ONE),
                    new CostBudget(db.jdbi(), key, "experiment exp", BigDecimal.ONE));
            AtomicInteger admitted = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                CostBudget b = processes.get(t % 2);
                done.add(pool.submit(() -> {
                    start.await();
                    while (true) {
                        CostBudget.Charge c;
                        try {
                            c = b.reserve(reservation);
                        } catch (BudgetReachedException e) {
                            refused.incrementAndGet();
                            assertThat(e.state().reached()).isTrue();
                            return null;
                        }
                        admitted.incrementAndGet();
                        b.settle(c, cost);
                        b.settle(c, cost); // a second settle does nothing
                    }
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            CostBudget.State st = processes.get(0).state().orElseThrow();
            assertThat(refused.get()).isEqualTo(8);
            assertThat(st.calls()).isEqualTo(admitted.get());
            assertThat(st.settled()).isEqualByComparingTo(cost.multiply(BigDecimal.valueOf(admitted.get())));
            assertThat(st.reserved()).isEqualByComparingTo(BigDecimal.ZERO);
            assertThat(st.charged()).isGreaterThanOrEqualTo(BigDecimal.ONE);
            assertThat(st.charged()).isLessThanOrEqualTo(BigDecimal.ONE.add(reservation));

            // A call in flight holds its reservation; a larger limit admits again.
            CostBudget raised = new CostBudget(db.jdbi(), key, "experiment exp", new BigDecimal("2"));
            CostBudget.Charge inFlight = raised.reserve(reservation);
            CostBudget.State during = CostBudget.read(db.jdbi(), key).orElseThrow();
            assertThat(during.reserved()).isEqualByComparingTo(reservation);
            assertThat(during.maxCost()).isEqualByComparingTo("2");
            raised.settle(inFlight, BigDecimal.ZERO);
            assertThat(CostBudget.read(db.jdbi(), key).orElseThrow().charged()).isEqualByComparingTo(st.charged());
            // The old limit is still refused at once.
            assertThatThrownBy(() -> processes.get(0).reserve(reservation))
                    .isInstanceOf(BudgetReachedException.class)
                    .hasMessageContaining("the budget of experiment exp is reached")
                    .hasMessageContaining("of max_cost 1");
        }
    }
}

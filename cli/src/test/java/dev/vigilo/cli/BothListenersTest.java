package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.worker.Worker;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link BothListeners} hands every event of {@link Worker.Listener} to both listeners: a method it does not override
 * would fall to the interface's empty default and silently starve one of them (the worker's {@code /metrics} once
 * missed every model call that way).
 */
class BothListenersTest {
    @org.junit.jupiter.api.Test
    void everyEventReachesBothListenersInOrder() throws Exception {
        List<String> seen = new ArrayList<>();
        Worker.Listener first = recording("first", seen);
        Worker.Listener second = recording("second", seen);
        BothListeners both = new BothListeners(first, second);
        List<Method> events = Arrays.stream(Worker.Listener.class.getMethods())
                .filter(Method::isDefault)
                .toList();
        assertThat(events).isNotEmpty();
        for (Method event : events) {
            seen.clear();
            Object[] args = new Object[event.getParameterCount()];
            Class<?>[] types = event.getParameterTypes();
            for (int i = 0; i < args.length; i++) {
                args[i] = types[i] == int.class
                        ? 0
                        : types[i] == long.class ? 0L : types[i] == boolean.class ? false : null;
            }
            event.invoke(both, args);
            assertThat(seen)
                    .as("BothListeners forwards %s", event.getName())
                    .containsExactly("first." + event.getName(), "second." + event.getName());
        }
    }

    private static Worker.Listener recording(String name, List<String> seen) {
        return (Worker.Listener) Proxy.newProxyInstance(
                Worker.Listener.class.getClassLoader(), new Class<?>[] {Worker.Listener.class}, (proxy, m, a) -> {
                    if (m.getDeclaringClass() == Object.class) {
                        return m.getName().equals("toString")
                                ? name
                                : m.getName().equals("hashCode") ? 0 : false;
                    }
                    seen.add(name + "." + m.getName());
                    return null;
                });
    }
}

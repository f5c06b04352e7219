package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code tool_use}: judges the tool calls of the attempt that answered ({@link EvaluationContext#toolCalls()}: an
 * http agent's executed calls, a command agent's {@code tool_call} events), not the output. Every {@code require}d
 * call must appear, each matched by a call of its own (the first not yet matched, or with {@code ordered} the first
 * after the previous requirement's): a call matches when its name is the requirement's and its arguments contain the
 * requirement's {@code arguments} as a subset (objects: every key given, matching recursively; arrays: the same
 * length, element by element; numbers: equal in value, so {@code 17} matches {@code 17.0}; other values: equal). No
 * call may name a {@code forbid}den tool, and there may be at most {@code max_calls} calls. Passes (score 1) when all
 * hold; the reason names every missing, forbidden or excess call. Stateless and thread-safe.
 */
final class ToolUseEvaluator implements Evaluator {
    /**
     * One required call.
     *
     * @param name      the tool's name
     * @param arguments the arguments the call must contain (a subset), if any
     */
    record Required(String name, Optional<JsonNode> arguments) {}

    private final List<Required> require;
    private final Set<String> forbid;
    private final Optional<Integer> maxCalls;
    private final boolean ordered;
    private final SecretValues secrets;

    ToolUseEvaluator(
            List<Required> require,
            Set<String> forbid,
            Optional<Integer> maxCalls,
            boolean ordered,
            SecretValues secrets) {
        this.require = List.copyOf(require);
        this.forbid = Set.copyOf(forbid);
        this.maxCalls = maxCalls;
        this.ordered = ordered;
        this.secrets = secrets;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        List<AgentToolCall> calls = context.toolCalls();
        List<Optional<JsonNode>> parsed = new ArrayList<>();
        for (AgentToolCall c : calls) {
            parsed.add(parse(c.arguments()));
        }
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            if (forbid.contains(calls.get(i).name())) {
                problems.add(
                        "forbidden call " + Reasons.quote(calls.get(i).name(), secrets) + " (call " + (i + 1) + ")");
            }
        }
        if (maxCalls.isPresent() && calls.size() > maxCalls.get()) {
            problems.add(calls.size() + " calls, over max_calls " + maxCalls.get() + " (excess from call "
                    + (maxCalls.get() + 1) + ", "
                    + Reasons.quote(calls.get(maxCalls.get()).name(), secrets) + ")");
        }
        boolean[] used = new boolean[calls.size()];
        int after = 0;
        List<String> matched = new ArrayList<>();
        for (Required r : require) {
            int found = -1;
            for (int i = ordered ? after : 0; i < calls.size() && found < 0; i++) {
                if (!used[i]
                        && calls.get(i).name().equals(r.name())
                        && (r.arguments().isEmpty()
                                || parsed.get(i).isPresent()
                                        && contains(
                                                parsed.get(i).get(),
                                                r.arguments().get()))) {
                    found = i;
                }
            }
            if (found < 0) {
                problems.add("missing call " + describe(r) + (ordered && after > 0 ? " after call " + after : ""));
            } else {
                used[found] = true;
                after = found + 1;
                matched.add(Reasons.quote(r.name(), secrets) + " (call " + (found + 1) + ")");
            }
        }
        if (!problems.isEmpty()) {
            return Verdict.of(false, String.join("; ", problems) + "; calls made: " + made(calls));
        }
        StringBuilder reason = new StringBuilder(calls.size() + (calls.size() == 1 ? " tool call" : " tool calls"));
        if (!matched.isEmpty()) {
            reason.append(", required ").append(ordered ? "in order " : "").append(String.join(", ", matched));
        }
        if (!forbid.isEmpty()) {
            reason.append(", none forbidden");
        }
        maxCalls.ifPresent(m -> reason.append(", within max_calls ").append(m));
        return Verdict.of(true, reason.toString());
    }

    private String describe(Required r) {
        return Reasons.quote(r.name(), secrets)
                + r.arguments()
                        .map(a -> " with arguments " + Reasons.quote(Json.text(a), secrets))
                        .orElse("");
    }

    /** The names of the calls made, in order ({@code none} without calls). */
    private String made(List<AgentToolCall> calls) {
        if (calls.isEmpty()) {
            return "none";
        }
        List<String> names = new ArrayList<>();
        for (int i = 0; i < calls.size() && i < 20; i++) {
            names.add(calls.get(i).name());
        }
        return Reasons.quote(String.join(", ", names) + (calls.size() > 20 ? ", …" : ""), secrets);
    }

    private static Optional<JsonNode> parse(String arguments) {
        try {
            return Optional.of(Json.parse(arguments));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Whether {@code actual} contains {@code wanted}: see the class comment. */
    static boolean contains(JsonNode actual, JsonNode wanted) {
        if (wanted.isObject()) {
            if (!actual.isObject()) {
                return false;
            }
            Iterator<Map.Entry<String, JsonNode>> fields = wanted.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> f = fields.next();
                JsonNode a = actual.get(f.getKey());
                if (a == null || !contains(a, f.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (wanted.isArray()) {
            if (!actual.isArray() || actual.size() != wanted.size()) {
                return false;
            }
            for (int i = 0; i < wanted.size(); i++) {
                if (!contains(actual.get(i), wanted.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (wanted.isNumber()) {
            return actual.isNumber() && actual.decimalValue().compareTo(wanted.decimalValue()) == 0;
        }
        return wanted.equals(actual);
    }
}

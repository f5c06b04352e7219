import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small, deterministic example agent for the command agent protocol (docs/formats/agent-protocol.md). It needs
 * nothing but Java: {@code java examples/agent/QuickAgent.java} reads {@code {"case": {...}}} on stdin and prints its
 * answer to the case's question on stdout.
 *
 * <p>It computes arithmetic, length conversions and word puzzles for real and knows a few capitals, so the
 * quickstart run shows real passes and failures: it gives the common mistake for Australia (Sydney), answers
 * Canada with more than the city (so exact_match fails where contains passes), and does not know time units.
 *
 * <p>It is deterministic per epoch ({@code VIGILO_EPOCH}, 1 when unset): in even epochs it answers Canada with the
 * bare city, so a run of several epochs (examples/epochs-profile.yaml) shows a case that passes some epochs only.
 */
public final class QuickAgent {
    private static final Map<String, String> CAPITALS = Map.of(
            "france", "Paris",
            "japan", "Tokyo",
            "australia", "Sydney", // deliberately wrong: the common mistake
            "canada", "Ottawa, Ontario", // right, but more than the bare name
            "italy", "Rome",
            "germany", "Berlin");

    /** Centimetres per unit of length. */
    private static final Map<String, BigDecimal> LENGTHS = Map.of(
            "millimetre", new BigDecimal("0.1"),
            "centimetre", BigDecimal.ONE,
            "metre", new BigDecimal("100"),
            "kilometre", new BigDecimal("100000"));

    private QuickAgent() {}

    public static void main(String[] args) throws IOException {
        String stdin = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        Object message = new Json(stdin).document();
        Object input = field(field(message, "case"), "input");
        Object question = input instanceof String ? input : field(input, "question");
        String answer = question instanceof String q ? answer(q.strip()) : "I don't know";
        if (answer.equals(CAPITALS.get("canada")) && epoch() % 2 == 0) {
            answer = "Ottawa"; // the bare city in even epochs: a case whose result depends on the epoch
        }
        System.out.println(answer);
    }

    /** The epoch of this call (docs/formats/agent-protocol.md), 1 when not run by a worker. */
    private static int epoch() {
        try {
            return Integer.parseInt(System.getenv().getOrDefault("VIGILO_EPOCH", "1"));
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    static String answer(String question) {
        Matcher m = Pattern.compile("What is (-?[\\d.]+) ([-+*/]|to the power of) (-?[\\d.]+)\\?").matcher(question);
        if (m.matches()) {
            return arithmetic(new BigDecimal(m.group(1)), m.group(2), new BigDecimal(m.group(3)));
        }
        m = Pattern.compile("What is the capital of ([A-Za-z ]+)\\?").matcher(question);
        if (m.matches()) {
            return CAPITALS.getOrDefault(m.group(1).toLowerCase(Locale.ROOT), "I don't know");
        }
        m = Pattern.compile("How many (\\w+?)s are in ([\\d.]+) (\\w+?)s?\\?").matcher(question);
        if (m.matches() && LENGTHS.containsKey(m.group(1)) && LENGTHS.containsKey(m.group(3))) {
            BigDecimal cm = new BigDecimal(m.group(2)).multiply(LENGTHS.get(m.group(3)));
            return plain(cm.divide(LENGTHS.get(m.group(1)), MathContext.DECIMAL64));
        }
        m = Pattern.compile("Reverse the word \"(.*)\"\\.?").matcher(question);
        if (m.matches()) {
            return new StringBuilder(m.group(1)).reverse().toString();
        }
        m = Pattern.compile("How many letters are in \"(.*)\"\\?").matcher(question);
        if (m.matches()) {
            return Long.toString(m.group(1).chars().filter(Character::isLetter).count());
        }
        return "I don't know";
    }

    private static String arithmetic(BigDecimal a, String op, BigDecimal b) {
        return switch (op) {
            case "+" -> plain(a.add(b));
            case "-" -> plain(a.subtract(b));
            case "*" -> plain(a.multiply(b));
            case "/" -> b.signum() == 0 ? "undefined" : plain(a.divide(b, MathContext.DECIMAL64));
            default -> plain(a.pow(b.intValueExact()));
        };
    }

    /** 64, not 64.000 or 6.4E+1. */
    private static String plain(BigDecimal d) {
        return d.stripTrailingZeros().toPlainString();
    }

    private static Object field(Object object, String name) {
        return object instanceof Map<?, ?> map ? map.get(name) : null;
    }

    /** Just enough JSON for the protocol: objects, arrays, strings, numbers, true, false, null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object document() {
            Object v = value();
            space();
            if (i != s.length()) {
                throw error("content after the JSON value");
            }
            return v;
        }

        private Object value() {
            space();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            return switch (c) {
                case '{' -> object();
                case '[' -> array();
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> number();
            };
        }

        private Map<String, Object> object() {
            Map<String, Object> out = new LinkedHashMap<>();
            i++;
            space();
            if (peek('}')) {
                return out;
            }
            do {
                space();
                String key = string();
                space();
                expect(':');
                out.put(key, value());
                space();
            } while (peek(','));
            expect('}');
            return out;
        }

        private List<Object> array() {
            List<Object> out = new ArrayList<>();
            i++;
            space();
            if (peek(']')) {
                return out;
            }
            do {
                out.add(value());
                space();
            } while (peek(','));
            expect(']');
            return out;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (i < s.length()) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e); // \" \\ \/
                }
            }
            throw error("unterminated string");
        }

        private Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (start == i) {
                throw error("unexpected character '" + s.charAt(i) + "'");
            }
            return new BigDecimal(s.substring(start, i));
        }

        private Object literal(String word, Object value) {
            if (!s.startsWith(word, i)) {
                throw error("expected " + word);
            }
            i += word.length();
            return value;
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private boolean peek(char c) {
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("QuickAgent: stdin is not valid JSON at character " + i + ": " + what);
        }
    }
}

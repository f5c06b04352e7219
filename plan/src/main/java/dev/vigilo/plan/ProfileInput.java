package dev.vigilo.plan;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where a profile comes from: {@code --profile TEXT} or {@code --profile-file F}. Both are parsed by the same
 * {@link ProfileParser} path (YAML or JSON, 8 MiB).
 */
public sealed interface ProfileInput {
    /** Parses the input; {@link ProfileException} on any problem. */
    Profile parse();

    static ProfileInput inline(String text) {
        return new Inline(text);
    }

    static ProfileInput file(Path file) {
        return new File(file);
    }

    /** Inline text. */
    record Inline(String text) implements ProfileInput {
        public Inline {
            Objects.requireNonNull(text, "text");
        }

        @Override
        public Profile parse() {
            return ProfileParser.parse(text);
        }
    }

    /** A file, read up to the 8 MiB limit. */
    record File(Path path) implements ProfileInput {
        public File {
            Objects.requireNonNull(path, "path");
        }

        @Override
        public Profile parse() {
            return ProfileParser.parseFile(path);
        }
    }
}

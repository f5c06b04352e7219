package dev.vigilo.control;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host JVM maps the command's class-data archive when the launcher names one that exists. */
class HostLauncherTest {
    @TempDir
    Path dir;

    private List<String> command(Optional<String> archive) {
        return HostLauncher.command(new EmbeddedLayout(dir), "token", Duration.ofSeconds(10), 0, archive);
    }

    @Test
    void anExistingArchiveIsPassedOnBeforeTheHostsClass() throws Exception {
        Path archive = Files.writeString(dir.resolve("vigilo-1.jsa"), "archive bytes");
        List<String> c = command(Optional.of(archive.toString()));
        assertThat(c).contains("-XX:SharedArchiveFile=" + archive, "-Xlog:cds*=off");
        assertThat(c.indexOf("-XX:SharedArchiveFile=" + archive))
                .isLessThan(c.indexOf(EmbeddedServerHost.class.getName()));
    }

    @Test
    void noArchiveOrAMissingOneLeavesTheJvmsDefault() {
        for (Optional<String> archive : List.of(
                Optional.<String>empty(),
                Optional.of(""),
                Optional.of(dir.resolve("gone.jsa").toString()))) {
            assertThat(command(archive))
                    .as(archive.toString())
                    .noneMatch(a -> a.startsWith("-XX:SharedArchiveFile="))
                    .contains(EmbeddedServerHost.class.getName());
        }
    }
}

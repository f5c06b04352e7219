package dev.vigilo.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalObjectStoreTest extends ObjectStoreContract {
    @TempDir
    Path temp;

    /** The store's root does not exist yet: the first create makes it. */
    private Path root() {
        return temp.resolve("objects");
    }

    @Override
    protected ObjectStore newStore() {
        return ObjectStores.open(new StoreSpec.Local("test", root()));
    }

    @Test
    void bindingIsTheAbsoluteRoot() {
        assertThat(store().binding())
                .isEqualTo(new StoreBinding("local:" + root().toAbsolutePath().normalize()));
    }

    @Test
    void objectsAreFilesUnderTheRoot() throws IOException {
        byte[] bytes = "on disk".getBytes(UTF_8);
        store().create(key("a/b"), bytes, soon());

        assertThat(Files.readAllBytes(root().resolve(namespace()).resolve("a").resolve("b")))
                .isEqualTo(bytes);
    }

    @Test
    void createsLeaveNoTemporaryFiles() throws IOException {
        ObjectRef ref = store().create(key("a/x"), "one".getBytes(UTF_8), soon());
        store().create(key("a/x"), "one".getBytes(UTF_8), soon());
        assertThatThrownBy(() -> store().create(key("a/x"), "two".getBytes(UTF_8), soon()))
                .isInstanceOf(ObjectConflictException.class);
        store().create(key("a/y"), new byte[0], soon());

        assertThat(hiddenFiles()).isEmpty();
        assertThat(store().read(ref, soon())).isEqualTo("one".getBytes(UTF_8));
    }

    @Test
    void leftoverTemporaryFilesAreNotListed() throws IOException {
        store().create(key("dir/real"), "real".getBytes(UTF_8), soon());
        Path dir = root().resolve(namespace()).resolve("dir");
        Files.write(dir.resolve(".x.tmp-123"), "half written".getBytes(UTF_8));
        Files.write(root().resolve(namespace()).resolve(".y.tmp-456"), "half written".getBytes(UTF_8));
        Files.createDirectories(dir.resolve(".hidden-dir"));
        Files.write(dir.resolve(".hidden-dir").resolve("z"), "hidden".getBytes(UTF_8));

        assertThat(store().list("", soon())).extracting(ObjectInfo::key).containsExactly(key("dir/real"));
        assertThat(store().list(namespace() + "/dir/", soon()))
                .extracting(ObjectInfo::key)
                .containsExactly(key("dir/real"));
    }

    @Test
    void leftoverTemporaryFileDoesNotBlockACreate() throws IOException {
        store().create(key("dir/other"), new byte[1], soon());
        Files.write(root().resolve(namespace()).resolve("dir").resolve(".x.tmp-123"), new byte[7]);

        ObjectRef ref = store().create(key("dir/x"), "fresh".getBytes(UTF_8), soon());
        assertThat(store().read(ref, soon())).isEqualTo("fresh".getBytes(UTF_8));
    }

    @Test
    void damagedFileIsDetectedOnRead() throws IOException {
        byte[] bytes = "precious data".getBytes(UTF_8);
        ObjectRef ref = store().create(key("precious"), bytes, soon());
        Path file = root().resolve(namespace()).resolve("precious");

        byte[] flipped = bytes.clone();
        flipped[3] ^= 1;
        overwrite(file, flipped);
        assertThatThrownBy(() -> store().read(ref, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("SHA-256");

        overwrite(file, "precious".getBytes(UTF_8));
        assertThatThrownBy(() -> store().read(ref, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("length is 8, expected 13");
    }

    @Test
    void keyCannotBeBothAnObjectAndADirectory() {
        store().create(key("a/b"), new byte[1], soon());
        store().create(key("c"), new byte[1], soon());

        assertThatThrownBy(() -> store().create(key("a"), new byte[1], soon()))
                .isExactlyInstanceOf(ConflictException.class)
                .hasMessageContaining("directory");
        assertThatThrownBy(() -> store().create(key("c/d"), new byte[1], soon()))
                .isExactlyInstanceOf(ConflictException.class)
                .hasMessageContaining("is an object");
        assertThatThrownBy(() -> store().read(ObjectRef.of(key("a"), new byte[1]), soon()))
                .isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void aRootThatIsNotADirectoryIsAConfigurationError() throws IOException {
        Files.createDirectories(temp);
        Files.writeString(root(), "not a directory");

        assertThatThrownBy(() -> store().create(key("a/b"), new byte[1], soon()))
                .isExactlyInstanceOf(InvalidInputException.class)
                .hasMessageContaining("its root " + root() + " is a regular file, not a directory");
    }

    @Test
    void listOfMissingRootIsEmpty() {
        assertThat(store().list("", soon())).isEmpty();
        assertThat(Files.exists(root())).isFalse();
    }

    @Test
    void closedStoreRefusesCalls() {
        store().close();
        store().close();

        assertThatThrownBy(() -> store().head(key("x"), soon())).isInstanceOf(IllegalStateException.class);
    }

    private static void overwrite(Path file, byte[] bytes) throws IOException {
        // Objects are created read-write; a real corruption would not ask for permission either.
        Files.write(file, bytes);
    }

    private List<Path> hiddenFiles() throws IOException {
        try (Stream<Path> files = Files.walk(root())) {
            return files.filter(p -> p.getFileName().toString().startsWith(".")).toList();
        }
    }
}

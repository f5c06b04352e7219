package dev.vigilo.exec;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The rules of docs/architecture.md, "exec in rooms", checked on exec's main classes: every room may use the root
 * package and {@code record}; {@code record} uses only the root; the root uses no room; views and audit read the
 * records, never the worker, admission or settlement; only the worker reaches into other rooms. And the module's API
 * is exactly the types the architecture table names: every other public type is marked internal to exec in its
 * package's {@code package-info.java}.
 */
class ExecRoomsTest {
    private static final String ROOT = "dev.vigilo.exec";
    private static final List<String> ROOMS =
            List.of("admission", "settlement", "placement", "review", "view", "audit", "worker", "record");

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        // Exec's main classes only: those beside Placements (its tests share the packages, not the location).
        String main = Placements.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toString();
        classes = new ClassFileImporter()
                .withImportOption(location -> location.asURI().toString().startsWith(main))
                .importPackages(ROOT);
        assertThat(classes.contain(ROOT + ".worker.Worker")).isTrue();
        assertThat(classes.contain(ROOT + ".ExecFixture")).isFalse();
    }

    private static String[] rooms(String... names) {
        return java.util.Arrays.stream(names).map(r -> ROOT + "." + r + "..").toArray(String[]::new);
    }

    private static String[] roomsExcept(String... allowed) {
        return ROOMS.stream()
                .filter(r -> !List.of(allowed).contains(r))
                .map(r -> ROOT + "." + r + "..")
                .toArray(String[]::new);
    }

    @Test
    void theRootUsesNoRoom() {
        ArchRule rule = noClasses()
                .that()
                .resideInAPackage(ROOT)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(rooms(ROOMS.toArray(String[]::new)))
                .because("the root package is the ground every room stands on (docs/architecture.md)");
        rule.check(classes);
    }

    @Test
    void recordUsesOnlyTheRoot() {
        ArchRule rule = noClasses()
                .that()
                .resideInAPackage(ROOT + ".record..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(roomsExcept("record"))
                .because("the records are shared by every room and use only the root package");
        rule.check(classes);
    }

    @Test
    void viewsAndAuditReadTheRecordsOnly() {
        for (String room : List.of("view", "audit")) {
            noClasses()
                    .that()
                    .resideInAPackage(ROOT + "." + room + "..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(roomsExcept(room, "record"))
                    .because("views and audit read the records, never the worker, admission or settlement")
                    .check(classes);
        }
    }

    @Test
    void onlyTheWorkerReachesIntoOtherRooms() {
        for (String room : List.of("admission", "settlement", "placement", "review")) {
            noClasses()
                    .that()
                    .resideInAPackage(ROOT + "." + room + "..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(roomsExcept(room, "record"))
                    .because("only the worker (the process that admits, claims and settles) reaches into other rooms")
                    .check(classes);
        }
    }

    @Test
    void theWorkerUsesNeitherTheViewsNorAudit() {
        noClasses()
                .that()
                .resideInAPackage(ROOT + ".worker..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(rooms("view", "audit"))
                .because("the worker uses admission, settlement, placement and record (docs/architecture.md)")
                .check(classes);
    }

    /** The exec row of the architecture table: its API types, as fully qualified names. */
    static Set<String> apiTypes(String architecture) {
        String row = architecture
                .lines()
                .filter(l -> l.startsWith("| `exec` |"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("docs/architecture.md has no exec row"));
        String api = row.split("\\|")[2].replaceAll("\\(\\+ [^)]*\\)", "");
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("`(?:([a-z]+)\\.)?([A-Z]\\w*)`").matcher(api);
        while (m.find()) {
            out.add(ROOT + (m.group(1) == null ? "" : "." + m.group(1)) + "." + m.group(2));
        }
        return out;
    }

    @Test
    void everyPublicTypeIsTheTablesApiOrMarkedInternal() throws IOException {
        Set<String> api = apiTypes(Files.readString(Path.of("../docs/architecture.md"), StandardCharsets.UTF_8));
        assertThat(api).contains(ROOT + ".Placements", ROOT + ".worker.Worker", ROOT + ".audit.RunVerifier");
        List<String> unmarked = new ArrayList<>();
        Set<String> publicTypes = new TreeSet<>();
        for (JavaClass c : classes) {
            if (!c.isTopLevelClass() || !c.getModifiers().contains(JavaModifier.PUBLIC)) {
                continue;
            }
            publicTypes.add(c.getName());
            if (api.contains(c.getName())) {
                continue;
            }
            Path info = Path.of("src/main/java", c.getPackageName().replace('.', '/'), "package-info.java");
            String text = Files.readString(info, StandardCharsets.UTF_8).replaceAll("\\s*\\n\\s*\\*\\s*", " ");
            int internal = text.indexOf("Internal to exec");
            boolean whole = text.contains("nothing here is the module's API");
            boolean named = internal >= 0 && text.indexOf("{@code " + c.getSimpleName() + "}", internal) >= 0;
            if (internal < 0 || !(whole || named)) {
                unmarked.add(c.getName());
            }
        }
        assertThat(unmarked)
                .as("public types that are neither the module's API (docs/architecture.md) nor marked internal to"
                        + " exec in their package-info.java")
                .isEmpty();
        assertThat(publicTypes)
                .as("the API types of docs/architecture.md are public")
                .containsAll(api);
    }
}

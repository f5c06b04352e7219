package dev.vigilo.plan;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigSyntaxException;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.ReadOptions;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The profiles of a run group (docs/run-preparation.md, "Run groups"): a base profile and an agents file
 * ({@code agents: [{name, agent}]}) give one profile per agent definition, the base with its {@code agent} section
 * replaced by the definition's and its {@code name} made {@code BASE:AGENT}. The base profile must be valid on its own. Everything is read and validated before
 * anything is written: a missing or malformed agents file, a repeated or invalid agent name, or an agent whose
 * profile does not validate is one {@link InvalidInputException} naming the file, line and agent.
 */
public final class GroupProfiles {
    /** The largest agents file read. */
    public static final int MAX_BYTES = Profile.MAX_BYTES;
    /** The most agents one group holds (one run each). */
    public static final int MAX_AGENTS = 64;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}");
    private static final ReadOptions READ = new ReadOptions(
            StreamReadConstraints.builder()
                    .maxStringLength(MAX_BYTES)
                    .maxNestingDepth(64)
                    .build(),
            true,
            MAX_BYTES + 16,
            20,
            "a value longer than an agents file allows");
    /** The source name the merged profiles are parsed under, cut from their problems (they have no file). */
    private static final String MERGED = "agent-profile";

    private GroupProfiles() {}

    /**
     * One member of a group.
     *
     * @param agentName the definition's {@code name}
     * @param profile   the member's validated profile
     * @param text      its canonical JSON, what {@link ProfileInput#inline} is given to create its run
     */
    public record Member(String agentName, Profile profile, String text) {
        public Member {
            Objects.requireNonNull(agentName, "agentName");
            Objects.requireNonNull(profile, "profile");
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * The members in the agents file's order.
     *
     * @param baseName        the base profile's name (the default group name)
     * @param members         one per agent definition
     * @param profilesSha256  SHA-256 over the members' names and canonical profiles, in order: what a repeat under the
     *                        same group name must match
     */
    public record Expansion(String baseName, List<Member> members, String profilesSha256) {
        public Expansion {
            members = List.copyOf(members);
        }
    }

    /**
     * Reads the base profile and the agents file and builds every member's profile.
     *
     * @param base   the base profile (its {@code agent} section is replaced; the rest is shared)
     * @param agents the agents file (YAML or JSON)
     * @throws InvalidInputException naming the file (and line) for any problem; nothing is written before
     */
    public static Expansion expand(ProfileInput base, Path agents) {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(agents, "agents");
        ObjectNode baseTree = baseTree(base);
        ConfigDocument doc = read(agents);
        JsonNode list = doc.root().path("agents");
        KeyPath at = KeyPath.root().key("agents");
        if (!doc.root().isObject() || !list.isArray() || list.isEmpty()) {
            throw new InvalidInputException(doc.where(at) + ": an agents file must be a mapping with a non-empty list"
                    + " 'agents', each entry {name, agent}; see docs/run-preparation.md, \"Run groups\"");
        }
        if (list.size() > MAX_AGENTS) {
            throw new InvalidInputException(doc.where(at) + ": " + list.size() + " agents, more than the " + MAX_AGENTS
                    + " a group holds; split them into several groups");
        }
        String baseName = baseTree.path("name").asText("");
        List<Member> members = new ArrayList<>();
        Set<String> names = new HashSet<>();
        var digest = Sha256.newDigest();
        for (int i = 0; i < list.size(); i++) {
            JsonNode entry = list.get(i);
            KeyPath e = at.index(i);
            if (!entry.isObject()) {
                throw new InvalidInputException(doc.where(e) + ": agents[" + i + "] must be a mapping {name, agent}");
            }
            var unknown = new ArrayList<String>();
            entry.fieldNames().forEachRemaining(k -> {
                if (!k.equals("name") && !k.equals("agent")) {
                    unknown.add(k);
                }
            });
            if (!unknown.isEmpty()) {
                throw new InvalidInputException(doc.where(e.key(unknown.get(0))) + ": agents[" + i
                        + "] has unknown key '" + unknown.get(0) + "'; an entry holds only name and agent");
            }
            JsonNode nameNode = entry.get("name");
            if (nameNode == null
                    || !nameNode.isTextual()
                    || !NAME.matcher(nameNode.asText()).matches()) {
                throw new InvalidInputException(doc.where(nameNode == null ? e : e.key("name")) + ": agents[" + i
                        + "].name must be 1..128 letters, digits, '_', '.', ':' or '-', starting with a letter or"
                        + " digit");
            }
            String name = nameNode.asText();
            if (!names.add(name)) {
                throw new InvalidInputException(doc.where(e.key("name")) + ": agent name \"" + name
                        + "\" appears twice; give every agent its own name");
            }
            JsonNode agent = entry.get("agent");
            if (agent == null || !agent.isObject()) {
                throw new InvalidInputException(doc.where(agent == null ? e : e.key("agent")) + ": agent \"" + name
                        + "\" needs an 'agent' mapping (the profile's agent section: kind, ...)");
            }
            ObjectNode merged = baseTree.deepCopy();
            merged.put("name", baseName + ":" + name);
            merged.set("agent", agent.deepCopy());
            Profile profile;
            try {
                profile = ProfileParser.parse(merged.toString().getBytes(StandardCharsets.UTF_8), MERGED);
            } catch (ProfileException x) {
                List<String> problems = new ArrayList<>();
                for (String p : x.problems()) {
                    problems.add(p.replaceFirst("^" + Pattern.quote(MERGED) + "(:\\d+:\\d+)?: ", ""));
                }
                throw new InvalidInputException(doc.where(e.key("agent")) + ": agent \"" + name
                        + "\" does not make a valid profile with the base profile: " + String.join("; ", problems));
            }
            String text = new String(ProfileJson.encode(profile), StandardCharsets.UTF_8);
            digest.update((name + "\n" + text + "\n").getBytes(StandardCharsets.UTF_8));
            members.add(new Member(name, profile, text));
        }
        return new Expansion(baseName, members, Sha256.ofDigest(digest.digest()).toHex());
    }

    /** The base profile's tree: its syntax and its name are checked here, the rest with each member. */
    private static ObjectNode baseTree(ProfileInput base) {
        byte[] bytes;
        String source;
        if (base instanceof ProfileInput.File f) {
            bytes = readFile(f.path(), "--profile-file", Profile.MAX_BYTES);
            source = f.path().toString();
        } else {
            bytes = ((ProfileInput.Inline) base).text().getBytes(StandardCharsets.UTF_8);
            source = "--profile";
        }
        // The base is a whole profile, valid on its own (its encoding, syntax and every section checked as for any
        // run), whose agent section each member then replaces.
        ProfileParser.parse(bytes, source);
        ConfigDocument doc;
        try {
            doc = ConfigDocument.yamlOrJson(bytes, source, READ);
        } catch (ConfigSyntaxException e) {
            throw new InvalidInputException("profile: not valid " + e.format() + " at " + source
                    + e.position().map(p -> ":" + p).orElse("") + ": " + e.problem() + "; fix the syntax");
        }
        if (!(doc.root() instanceof ObjectNode o)) {
            throw new InvalidInputException(
                    "profile: " + source + " must be a mapping with name, agent, evaluators, gates");
        }
        if (!o.path("name").isTextual()
                || !NAME.matcher(o.path("name").asText()).matches()) {
            throw new InvalidInputException(doc.where(KeyPath.root().key("name"))
                    + ": the profile needs a valid name (1..128 letters, digits, '_', '.', ':' or '-'): the group's"
                    + " runs are named NAME:AGENT");
        }
        return o;
    }

    private static ConfigDocument read(Path agents) {
        byte[] bytes = readFile(agents, "--agents", MAX_BYTES);
        try {
            ConfigDocument doc = ConfigDocument.yamlOrJson(bytes, agents.toString(), READ);
            if (doc.isEmpty()) {
                throw new InvalidInputException("--agents " + agents + " is empty; list the agents under 'agents:'");
            }
            return doc;
        } catch (ConfigSyntaxException e) {
            throw new InvalidInputException("--agents: not valid " + e.format() + " at " + agents
                    + e.position().map(p -> ":" + p).orElse("") + ": " + e.problem() + "; fix the syntax");
        }
    }

    private static byte[] readFile(Path file, String option, int max) {
        InputFiles.problem(file).ifPresent(problem -> {
            throw new InvalidInputException(
                    option + " " + file + " " + problem + "; give the path of a YAML or JSON" + " file");
        });
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(max + 1);
            if (bytes.length > max) {
                throw new InvalidInputException(option + " " + file + " is larger than " + max + " bytes; shrink it");
            }
            return bytes;
        } catch (NoSuchFileException e) {
            throw new InvalidInputException(option + " " + file + " does not exist; check the path");
        } catch (IOException e) {
            throw new InvalidInputException(option + " cannot read " + file + ": " + e.getMessage());
        }
    }
}

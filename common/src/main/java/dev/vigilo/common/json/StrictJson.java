package dev.vigilo.common.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The strict reading of JSON that other programs write (an agent's output, an endpoint's answer): a duplicate key
 * or content after the value is an error rather than a silent choice, nesting is bounded (256 levels) and strings
 * may be up to 64 MiB. A factory, not a shared instance: an {@link ObjectMapper} can be reconfigured, so each user
 * keeps its own.
 */
public final class StrictJson {
    private StrictJson() {}

    /** A new mapper with the strict settings. */
    public static ObjectMapper newMapper() {
        return new ObjectMapper(JsonFactory.builder()
                        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                        .streamReadConstraints(StreamReadConstraints.builder()
                                .maxNestingDepth(256)
                                .maxStringLength(64 << 20)
                                .build())
                        .build())
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    }
}

package dev.vigilo.checkpoint;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Raw read access to files inside the log dataset that Lance's Java API does not expose (MemWAL shard manifests):
 * the local file system, or S3 through the AWS SDK configured from the same storage options Lance gets.
 * Paths are relative to the dataset root, '/'-separated.
 */
interface LogFiles extends AutoCloseable {
  /** Names of the direct children (files and folders) of {@code dir}; empty if it does not exist. */
  List<String> list(String dir);

  /** Bytes of {@code path}, empty if it does not exist. */
  Optional<byte[]> read(String path);

  @Override
  void close();

  static LogFiles open(LogLocation loc) {
    return loc.isLocal() ? new Local(loc.logDir()) : S3.open(loc);
  }

  /** Local directory. */
  final class Local implements LogFiles {
    private final Path root;

    Local(Path root) {
      this.root = root;
    }

    @Override
    public List<String> list(String dir) {
      Path d = root.resolve(dir);
      if (!Files.isDirectory(d)) return List.of();
      try (Stream<Path> s = Files.list(d)) {
        return s.map(p -> p.getFileName().toString()).sorted().toList();
      } catch (IOException e) {
        throw new LogIoException("cannot list " + d, e);
      }
    }

    @Override
    public Optional<byte[]> read(String path) {
      try {
        return Optional.of(Files.readAllBytes(root.resolve(path)));
      } catch (NoSuchFileException e) {
        return Optional.empty();
      } catch (IOException e) {
        throw new LogIoException("cannot read " + root.resolve(path), e);
      }
    }

    @Override
    public void close() {}
  }

  /** An S3 prefix. */
  final class S3 implements LogFiles {
    private final S3Client client;
    private final String bucket;
    private final String prefix;

    private S3(S3Client client, String bucket, String prefix) {
      this.client = client;
      this.bucket = bucket;
      this.prefix = prefix;
    }

    static S3 open(LogLocation loc) {
      URI u = URI.create(loc.uri());
      Map<String, String> so = loc.storageOptions();
      var b = S3Client.builder().region(Region.of(so.getOrDefault("aws_region", "us-east-1")));
      if (so.containsKey("aws_endpoint")) b.endpointOverride(URI.create(so.get("aws_endpoint"))).forcePathStyle(true);
      if (so.containsKey("aws_access_key_id")) {
        b.credentialsProvider(StaticCredentialsProvider.create(
            AwsBasicCredentials.create(so.get("aws_access_key_id"), so.get("aws_secret_access_key"))));
      } else {
        b.credentialsProvider(DefaultCredentialsProvider.builder().build());
      }
      String key = u.getPath().startsWith("/") ? u.getPath().substring(1) : u.getPath();
      return new S3(b.build(), u.getHost(), key);
    }

    @Override
    public List<String> list(String dir) {
      String p = prefix + "/" + dir + "/";
      List<String> out = new ArrayList<>();
      String token = null;
      try {
        do {
          ListObjectsV2Response r = client.listObjectsV2(ListObjectsV2Request.builder().bucket(bucket).prefix(p)
              .delimiter("/").continuationToken(token).build());
          for (CommonPrefix cp : r.commonPrefixes()) {
            String s = cp.prefix().substring(p.length());
            out.add(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
          }
          for (S3Object o : r.contents()) out.add(o.key().substring(p.length()));
          token = r.isTruncated() ? r.nextContinuationToken() : null;
        } while (token != null);
      } catch (SdkException e) {
        throw new LogIoException("cannot list s3://" + bucket + "/" + p + ": " + e.getMessage(), e);
      }
      out.sort(null);
      return out;
    }

    @Override
    public Optional<byte[]> read(String path) {
      try {
        return Optional.of(client.getObjectAsBytes(b -> b.bucket(bucket).key(prefix + "/" + path)).asByteArray());
      } catch (NoSuchKeyException e) {
        return Optional.empty();
      } catch (SdkException e) {
        throw new LogIoException("cannot read s3://" + bucket + "/" + prefix + "/" + path + ": " + e.getMessage(), e);
      }
    }

    @Override
    public void close() {
      client.close();
    }
  }
}

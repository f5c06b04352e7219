package dev.vigilo.cli;

import dev.vigilo.storage.S3ProxyFixture;

/**
 * The S3 "host" of MultiHostIT, a child process started in its own network namespace: {@code MultiHostS3 ADDRESS PORT}
 * runs s3proxy (in memory, the fixture's bucket and credentials) listening on that address, prints
 * {@code s3 listening on ENDPOINT} and serves until its standard input closes (the test ended or died) or it is killed.
 */
public final class MultiHostS3 {
    private MultiHostS3() {}

    public static void main(String[] args) throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.startAt(args[0], Integer.parseInt(args[1]))) {
            System.out.println("s3 listening on " + s3.endpoint());
            System.out.flush();
            while (System.in.read() >= 0) {
                // nothing is sent; end of input means the test is gone
            }
        }
        System.exit(0);
    }
}

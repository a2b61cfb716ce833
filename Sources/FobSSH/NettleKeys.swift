import CNettle
import CSodium
import FobSystem

/// The RSA and ECDSA P-256 operations of Nettle (through CNettle's
/// `fob_ssh_*` glue), with libsodium's `randombytes_buf` as their random source.
enum NettleKeys {
    /// Nettle's random callback: libsodium's CSPRNG.
    static let random: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<UInt8>?) -> Void = {
        _, length, destination in
        if let destination { randombytes_buf(destination, length) }
    }

    /// Calls `body` with `fob_ssh_number` views of the byte arrays.
    private static func withNumbers<R>(_ arrays: [[UInt8]], _ body: ([fob_ssh_number]) -> R) -> R {
        var numbers: [fob_ssh_number] = []
        func step(_ index: Int) -> R {
            if index == arrays.count { return body(numbers) }
            return arrays[index].withUnsafeBufferPointer { buffer in
                numbers.append(fob_ssh_number(bytes: buffer.baseAddress, count: buffer.count))
                return step(index + 1)
            }
        }
        return step(0)
    }

    static func rsaVerify(e: [UInt8], n: [UInt8], hash: Int32, digest: [UInt8], signature: [UInt8]) -> Bool {
        withNumbers([n, e, signature]) { numbers in
            var (n, e, s) = (numbers[0], numbers[1], numbers[2])
            return fob_ssh_rsa_verify(&n, &e, hash, digest, &s) == 1
        }
    }

    /// An RSASSA-PKCS1-v1_5 signature, as long as the modulus, over a
    /// SHA-256 (`hash` 256) or SHA-512 (`hash` 512) digest.
    static func rsaSign(
        n: [UInt8], e: [UInt8], secrets: [SecretBytes], hash: Int32, digest: [UInt8]
    ) throws(SSHKeyError) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 1024)
        var written = 0
        let status = withNumbers([n, e]) { publicParts in
            withSecretNumbers(secrets) { secretParts in
                var all = publicParts + secretParts
                return fob_ssh_rsa_sign(
                    &all[0], &all[1], &all[2], &all[3], &all[4], &all[5], hash, digest, nil, random, &signature,
                    signature.count, &written)
            }
        }
        guard status == 1 else { throw .signingFailed }
        return Array(signature.prefix(written))
    }

    /// Calls `body` with `fob_ssh_number` views of secrets, never copied.
    private static func withSecretNumbers<R>(_ secrets: [SecretBytes], _ body: ([fob_ssh_number]) -> R) -> R {
        var numbers: [fob_ssh_number] = []
        func step(_ index: Int) -> R {
            if index == secrets.count { return body(numbers) }
            return secrets[index].withUnsafeBytes { raw in
                numbers.append(fob_ssh_number(bytes: raw.bindMemory(to: UInt8.self).baseAddress, count: raw.count))
                return step(index + 1)
            }
        }
        return step(0)
    }

    /// A new RSA key's n, e (public) and d, iqmp, p, q (secret).
    static func rsaGenerate(bits: Int) throws(SSHKeyError) -> (n: [UInt8], e: [UInt8], secrets: [SecretBytes]) {
        let size = bits / 8
        let buffers = (0..<6).map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: size) }
        defer {
            for buffer in buffers {
                sodium_memzero(buffer, size)
                buffer.deallocate()
            }
        }
        var lengths = [Int](repeating: 0, count: 6)
        let pointers: [UnsafeMutablePointer<UInt8>?] = buffers
        let status = pointers.withUnsafeBufferPointer { out in
            fob_ssh_rsa_generate(UInt32(bits), nil, random, out.baseAddress, &lengths)
        }
        guard status == 1 else { throw .signingFailed }
        let n = Array(UnsafeBufferPointer(start: buffers[0], count: lengths[0]))
        let e = Array(UnsafeBufferPointer(start: buffers[1], count: lengths[1]))
        let secrets = (2..<6).map { SecretBytes(UnsafeBufferPointer(start: buffers[$0], count: lengths[$0])) }
        return (n, e, secrets)
    }

    static func p256Verify(point: [UInt8], digest: [UInt8], r: [UInt8], s: [UInt8]) -> Bool {
        guard point.count == 65, r.count <= 32, s.count <= 32 else { return false }
        let x = Array(point[1..<33])
        let y = Array(point[33..<65])
        return withNumbers([r, s]) { numbers in
            var (r, s) = (numbers[0], numbers[1])
            return fob_ssh_p256_verify(x, y, digest, digest.count, &r, &s) == 1
        }
    }

    /// The r and s of an ECDSA P-256 signature (32 bytes each) over a SHA-256 digest.
    static func p256Sign(scalar: SecretBytes, digest: [UInt8]) throws(SSHKeyError) -> ([UInt8], [UInt8]) {
        var r = [UInt8](repeating: 0, count: 32)
        var s = [UInt8](repeating: 0, count: 32)
        let status = scalar.withUnsafeBytes { key in
            fob_ssh_p256_sign(key.bindMemory(to: UInt8.self).baseAddress, digest, nil, random, &r, &s)
        }
        guard status == 1 else { throw .signingFailed }
        return (r, s)
    }

    /// The uncompressed point of a P-256 scalar, or `nil` for a scalar out of range.
    static func p256Public(scalar: SecretBytes) -> [UInt8]? {
        guard scalar.count == 32 else { return nil }
        var x = [UInt8](repeating: 0, count: 32)
        var y = [UInt8](repeating: 0, count: 32)
        let status = scalar.withUnsafeBytes { key in
            fob_ssh_p256_public(key.bindMemory(to: UInt8.self).baseAddress, &x, &y)
        }
        return status == 1 ? [4] + x + y : nil
    }

    /// A new P-256 key: its scalar and uncompressed point.
    static func p256Generate() -> (SecretBytes, [UInt8]) {
        var x = [UInt8](repeating: 0, count: 32)
        var y = [UInt8](repeating: 0, count: 32)
        let scalar = SecretBytes(count: 32, guarded: true) { out in
            fob_ssh_p256_generate(nil, random, out.baseAddress, &x, &y)
        }
        return (scalar, [4] + x + y)
    }
}

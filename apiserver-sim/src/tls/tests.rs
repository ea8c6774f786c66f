//! Go's verification rules on OpenSSL-made certificates (`tests/it/admission/certs/`) and
//! rcgen-made ones: what kube-apiserver's client accepts is accepted, what it refuses is
//! refused with its message.

use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};

use super::cert::Cert;
use super::chain::verify;
use super::roots::from_pem;

const SELF_SIGNED: &[u8] = include_bytes!("../../tests/it/admission/certs/self-signed.crt");
const SELF_SIGNED_EC: &[u8] = include_bytes!("../../tests/it/admission/certs/self-signed-ec.crt");
const WRONG_NAME: &[u8] = include_bytes!("../../tests/it/admission/certs/wrong-name.crt");
const CA: &[u8] = include_bytes!("../../tests/it/admission/certs/ca.crt");
const LEAF: &[u8] = include_bytes!("../../tests/it/admission/certs/leaf.crt");
const LEAF_SHA1: &[u8] = include_bytes!("../../tests/it/admission/certs/leaf-sha1.crt");
const LEAF_CLIENT_AUTH: &[u8] =
    include_bytes!("../../tests/it/admission/certs/leaf-client-auth.crt");

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn one(pem: &[u8]) -> Cert {
    from_pem(pem).into_iter().next().expect("a certificate")
}

fn check(leaf: &[u8], roots: &[u8], host: &str) -> Result<(), String> {
    verify(&one(leaf), &[], &from_pem(roots), host, now())
}

#[test]
fn openssl_self_signed_ca_certificates_are_trusted_as_their_own_bundle() {
    assert_eq!(
        one(SELF_SIGNED).basic_constraints,
        Some((true, None)),
        "OpenSSL marks it CA:TRUE"
    );
    assert_eq!(check(SELF_SIGNED, SELF_SIGNED, "127.0.0.1"), Ok(()));
    assert_eq!(check(SELF_SIGNED_EC, SELF_SIGNED_EC, "127.0.0.1"), Ok(()));
    assert_eq!(check(SELF_SIGNED_EC, SELF_SIGNED_EC, "LOCALHOST"), Ok(()));
    // Not trusted by another bundle.
    assert_eq!(
        check(SELF_SIGNED, CA, "127.0.0.1"),
        Err("x509: certificate signed by unknown authority".into())
    );
}

#[test]
fn names_are_the_subject_alt_names_only() {
    assert_eq!(
        check(SELF_SIGNED, SELF_SIGNED, "127.0.0.2"),
        Err("x509: certificate is valid for 127.0.0.1, not 127.0.0.2".into())
    );
    assert_eq!(
        check(SELF_SIGNED, SELF_SIGNED, "hook.webhooks.svc"),
        Err(
            "x509: certificate is not valid for any names, but wanted to match hook.webhooks.svc"
                .into()
        )
    );
    assert_eq!(
        check(WRONG_NAME, WRONG_NAME, "127.0.0.1"),
        Err("x509: certificate is valid for 127.0.0.2, not 127.0.0.1".into())
    );
    assert_eq!(
        check(WRONG_NAME, WRONG_NAME, "other.example.com"),
        Err("x509: certificate is valid for webhook.example.com, not other.example.com".into())
    );
}

#[test]
fn authority_signed_leaves_need_a_secure_signature_and_server_auth() {
    assert_eq!(check(LEAF, CA, "127.0.0.1"), Ok(()));
    assert_eq!(check(LEAF, CA, "localhost"), Ok(()));
    let sha1 = check(LEAF_SHA1, CA, "127.0.0.1").expect_err("SHA-1");
    assert!(sha1.contains("insecure algorithm SHA1-RSA"), "{sha1}");
    assert!(
        sha1.starts_with("x509: certificate signed by unknown authority (possibly because of"),
        "{sha1}"
    );
    assert_eq!(
        check(LEAF_CLIENT_AUTH, CA, "127.0.0.1"),
        Err("x509: certificate specifies an incompatible key usage".into())
    );
    // The leaf is no authority for others.
    assert!(check(SELF_SIGNED, LEAF, "127.0.0.1").is_err());
}

fn issuer(is_ca: IsCa) -> (Issuer<'static, KeyPair>, rcgen::Certificate) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = is_ca;
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("self-signed");
    (Issuer::new(params, key), cert)
}

fn leaf_params(names: &[&str]) -> CertificateParams {
    CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("params")
}

fn der(cert: &rcgen::Certificate) -> Cert {
    Cert::from_der(cert.der()).expect("parse")
}

#[test]
fn rcgen_certificates_validity_and_intermediates() {
    let (root, root_cert) = issuer(IsCa::Ca(BasicConstraints::Unconstrained));
    let roots = vec![der(&root_cert)];
    let key = KeyPair::generate().expect("key");
    // A plain leaf, and one that is its own bundle (CA:FALSE, self-signed).
    let leaf = leaf_params(&["127.0.0.1", "hook.webhooks.svc"])
        .signed_by(&key, &root)
        .expect("leaf");
    assert_eq!(
        verify(&der(&leaf), &[], &roots, "hook.webhooks.svc", now()),
        Ok(())
    );
    let own = leaf_params(&["localhost"]).self_signed(&key).expect("own");
    assert_eq!(
        verify(&der(&own), &[], &[der(&own)], "localhost", now()),
        Ok(())
    );
    // Expired and not yet valid, at the leaf and at the root.
    let mut expired = leaf_params(&["127.0.0.1"]);
    expired.not_before = rcgen::date_time_ymd(2000, 1, 1);
    expired.not_after = rcgen::date_time_ymd(2001, 1, 1);
    let expired = expired.signed_by(&key, &root).expect("expired");
    let err = verify(&der(&expired), &[], &roots, "127.0.0.1", now()).expect_err("expired");
    assert!(
        err.starts_with("x509: certificate has expired or is not yet valid: current time ")
            && err.ends_with(" is after 2001-01-01T00:00:00Z"),
        "{err}"
    );
    let mut future = leaf_params(&["127.0.0.1"]);
    future.not_before = rcgen::date_time_ymd(2999, 1, 1);
    future.not_after = rcgen::date_time_ymd(3000, 1, 1);
    let future = future.signed_by(&key, &root).expect("future");
    let err = verify(&der(&future), &[], &roots, "127.0.0.1", now()).expect_err("future");
    assert!(err.ends_with(" is before 2999-01-01T00:00:00Z"), "{err}");
    // Through an intermediate the server presents; not without it.
    let mut mid_params = CertificateParams::new(Vec::<String>::new()).expect("params");
    mid_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    let mid_key = KeyPair::generate().expect("key");
    let mid_cert = mid_params.clone().signed_by(&mid_key, &root).expect("mid");
    let mid = Issuer::new(mid_params, mid_key);
    let leaf = leaf_params(&["127.0.0.1"])
        .signed_by(&key, &mid)
        .expect("leaf");
    assert_eq!(
        verify(&der(&leaf), &[der(&mid_cert)], &roots, "127.0.0.1", now()),
        Ok(())
    );
    assert!(verify(&der(&leaf), &[], &roots, "127.0.0.1", now()).is_err());
    // An issuer that is no CA cannot sign.
    let (not_ca, not_ca_cert) = issuer(IsCa::ExplicitNoCa);
    let leaf = leaf_params(&["127.0.0.1"])
        .signed_by(&key, &not_ca)
        .expect("leaf");
    let err =
        verify(&der(&leaf), &[], &[der(&not_ca_cert)], "127.0.0.1", now()).expect_err("no CA");
    assert!(
        err.starts_with("x509: certificate signed by unknown authority (possibly"),
        "{err}"
    );
    // Extended key usage for clients only.
    let mut client = leaf_params(&["127.0.0.1"]);
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client = client.signed_by(&key, &root).expect("client");
    assert_eq!(
        verify(&der(&client), &[], &roots, "127.0.0.1", now()),
        Err("x509: certificate specifies an incompatible key usage".into())
    );
}

#[test]
fn name_constraints_of_the_authority_apply() {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.name_constraints = Some(rcgen::NameConstraints {
        permitted_subtrees: vec![rcgen::GeneralSubtree::DnsName("webhooks.svc".into())],
        excluded_subtrees: vec![],
    });
    let key = KeyPair::generate().expect("key");
    let root_cert = params.self_signed(&key).expect("root");
    let root = Issuer::new(params, key);
    let leaf_key = KeyPair::generate().expect("key");
    let inside = leaf_params(&["hook.webhooks.svc"])
        .signed_by(&leaf_key, &root)
        .expect("in");
    let outside = leaf_params(&["hook.other.svc"])
        .signed_by(&leaf_key, &root)
        .expect("out");
    let roots = vec![der(&root_cert)];
    assert_eq!(
        verify(&der(&inside), &[], &roots, "hook.webhooks.svc", now()),
        Ok(())
    );
    let err = verify(&der(&outside), &[], &roots, "hook.other.svc", now()).expect_err("outside");
    assert!(
        err.contains("not authorized to sign for this name"),
        "{err}"
    );
}

#[test]
fn critical_extensions_go_does_not_know_and_malformed_certificates_are_refused() {
    let (root, root_cert) = issuer(IsCa::Ca(BasicConstraints::Unconstrained));
    let roots = vec![der(&root_cert)];
    let key = KeyPair::generate().expect("key");
    let mut params = leaf_params(&["hook.webhooks.svc"]);
    let mut unknown =
        rcgen::CustomExtension::from_oid_content(&[1, 3, 6, 1, 4, 1, 99999, 1], vec![0x05, 0x00]);
    unknown.set_criticality(true);
    params.custom_extensions.push(unknown);
    let leaf = der(&params.signed_by(&key, &root).expect("signed"));
    assert!(leaf.unhandled_critical);
    assert_eq!(
        verify(&leaf, &[], &roots, "hook.webhooks.svc", now()),
        Err("x509: unhandled critical extension".into())
    );

    let whole = root_cert.der().to_vec();
    for cut in [1, whole.len() / 2, whole.len() - 1] {
        let error = Cert::from_der(&whole[..cut]).expect_err("a truncated certificate");
        assert!(
            error.starts_with("x509: malformed certificate: "),
            "{error}"
        );
    }
    let mut trailing = whole.clone();
    trailing.push(0);
    assert!(Cert::from_der(&trailing).is_err());
    assert!(Cert::from_der(&[]).is_err());
}

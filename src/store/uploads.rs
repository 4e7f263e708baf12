//! Incomplete multipart uploads under a dataset: what a writer killed in the
//! middle of a large file (an index segment's, a data file's) leaves on an
//! object store.  The store keeps their parts, and bills them, until they
//! are aborted, and no listing of objects shows them.  Neither the core nor
//! object_store lists them (object_store 0.14.2 src/multipart.rs: its
//! `MultipartStore` has `abort_multipart` but no listing; src/upload.rs
//! recommends lifecycle rules), so on s3:// this module sends S3's
//! ListMultipartUploads itself, as a URL presigned by object_store's own
//! signer, and aborts each upload older than the cutoff with object_store.
//! Other stores: Azure discards uncommitted blocks itself (after about a
//! week, object_store src/azure/mod.rs), and the OpenDAL stores (oss://,
//! cos://, tos://) expose no listing; there a lifecycle rule is the cure.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::Either;
use lance::Dataset;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{
    ClientConfigKey, ClientOptions, HttpClient, HttpConnector, HttpRequest, HttpRequestBody, ReqwestConnector,
};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::signer::{SignedUrlOptions, Signer};
use regex::Regex;
use url::Url;

use crate::boundary::error::{not_supported, CError, CResult, Code};
use crate::process::runtime::block_on;

/// How long a listing URL stays valid.
const URL_LIFETIME: Duration = Duration::from_secs(300);

/// One incomplete upload, as ListMultipartUploads reports it.
struct Upload {
    key: String,
    id: String,
    initiated: DateTime<Utc>,
}

fn io(what: &str, e: impl std::fmt::Display) -> CError {
    CError::new(Code::Io, format!("{what}: {e}"))
}

/// Aborts every incomplete multipart upload under the dataset's prefix
/// started more than `older_than` ago.  Returns how many were aborted; 0 on
/// the local file system (which has none).
pub fn abort_incomplete_uploads(ds: &Dataset, older_than: Duration) -> CResult<u64> {
    abort_under(ds, "", older_than)
}

/// Whether this module can list the dataset's incomplete uploads (s3://).
pub fn lists_uploads(ds: &Dataset) -> bool {
    matches!(bucket_of(ds), Ok(Some(_)))
}

/// Aborts every incomplete upload under `<dataset>/<sub>` (`sub` empty or
/// ending in '/') started more than `older_than` ago.
pub fn abort_under(ds: &Dataset, sub: &str, older_than: Duration) -> CResult<u64> {
    block_on(aborting_under(ds, sub, older_than)?)?
}

/// `abort_under` as a future to run on the shared runtime (0 off s3://).
pub fn aborting_under(
    ds: &Dataset,
    sub: &str,
    older_than: Duration,
) -> CResult<impl std::future::Future<Output = CResult<u64>> + Send + 'static> {
    let target = bucket_of(ds)?;
    let sub = sub.to_string();
    let cutoff = Utc::now()
        - chrono::Duration::from_std(older_than).map_err(|_| io("older_than is too large", older_than.as_secs()))?;
    Ok(async move {
        let Some((bucket, path, options)) = target else { return Ok(0) };
        let prefix = if path.is_empty() { sub } else { format!("{path}/{sub}") };
        let (s3, client) = s3_client(&bucket, &options)?;
        let mut aborted = 0;
        for upload in list_uploads(&s3, &client, &prefix).await? {
            // 0 takes every one (the store's clock may run ahead of ours).
            if !older_than.is_zero() && upload.initiated > cutoff {
                continue;
            }
            abort_one(&s3, &client, &prefix, &upload).await?;
            aborted += 1;
        }
        Ok(aborted)
    })
}

/// How often an abort still unanswered looks whether its upload is gone.
const RECHECK: Duration = Duration::from_millis(50);

/// Aborts one upload.  Another party may be aborting it at the same moment
/// (a writer dropped mid-file sends its own abort as it goes, which the
/// store may still be processing when it is listed here): a store may then
/// refuse the second abort (S3 answers NoSuchUpload once the upload is
/// gone) or hold it back (SeaweedFS answers it about a second later).  So
/// while the abort is unanswered the uploads are listed again every
/// RECHECK, and after a refusal once more; the upload counts as aborted
/// once a listing no longer shows it.
async fn abort_one(s3: &AmazonS3, client: &HttpClient, prefix: &str, upload: &Upload) -> CResult<()> {
    let gone = || async { Ok::<_, CError>(!list_uploads(s3, client, prefix).await?.iter().any(|u| u.id == upload.id)) };
    let path = Path::from(upload.key.as_str());
    let mut abort = std::pin::pin!(s3.abort_multipart(&path, &upload.id));
    loop {
        let tick = std::pin::pin!(tokio::time::sleep(RECHECK));
        match futures::future::select(abort.as_mut(), tick).await {
            Either::Left((Ok(()), _)) => return Ok(()),
            Either::Left((Err(e), _)) => {
                return match gone().await {
                    Ok(true) => Ok(()),
                    _ => Err(io(&format!("aborting the incomplete upload of {}", upload.key), e)),
                }
            }
            // A listing that fails leaves the abort to answer for itself.
            Either::Right(_) => {
                if matches!(gone().await, Ok(true)) {
                    return Ok(());
                }
            }
        }
    }
}

/// Makes the clients `abort_under` will use for this dataset now, so that a
/// cancelled build does not spend its return making them (a build on
/// s3:// calls it as it starts).  A failure is left for `abort_under` to report.
pub fn prepare(ds: &Dataset) {
    if let Ok(Some((bucket, _, options))) = bucket_of(ds) {
        let _ = s3_client(&bucket, &options);
    }
}

/// A dataset's bucket, its path in the bucket and its storage options.
type BucketOf = (String, String, HashMap<String, String>);

/// The dataset's bucket, its path in the bucket (no leading or trailing
/// '/') and its storage options; None on the local file system.
fn bucket_of(ds: &Dataset) -> CResult<Option<BucketOf>> {
    let uri = ds.uri();
    let Ok(url) = Url::parse(uri) else { return Ok(None) }; // a plain local path
    match url.scheme() {
        "file" | "file+uring" => return Ok(None),
        "s3" | "s3a" => {}
        scheme => {
            return Err(not_supported(format!(
                "listing incomplete multipart uploads is done on s3:// only, not {scheme}:// ({uri}); configure \
                 the store's lifecycle rule that aborts them instead (docs/object-storage.md)"
            )))
        }
    }
    let bucket = url.host_str().ok_or_else(|| io("the dataset's URI has no bucket", uri))?.to_string();
    let path = url.path().trim_matches('/').to_string();
    let options = ds.store_params().and_then(|p| p.storage_options()).cloned().unwrap_or_default();
    Ok(Some((bucket, path, options)))
}

/// The bucket's client, from the dataset's storage options (object_store's
/// keys, e.g. aws_endpoint, aws_region, aws_access_key_id, allow_http) and
/// the AWS_* environment, and an HTTP client with the same client options.
/// Made once per bucket and options in a process and kept: making them
/// loads the system's root certificates twice, milliseconds that a
/// cancelled build on s3:// would otherwise spend before returning.  (They
/// are only used on the shared runtime, whose connections live as long as
/// the process; the environment is read when the first is made.)
fn s3_client(bucket: &str, options: &HashMap<String, String>) -> CResult<(AmazonS3, HttpClient)> {
    static CLIENTS: Mutex<Vec<(String, AmazonS3, HttpClient)>> = Mutex::new(Vec::new());
    let mut sorted: Vec<_> = options.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    sorted.sort();
    let key = format!("{bucket}\n{sorted:?}");
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, s3, client)) = clients.iter().find(|(k, ..)| *k == key) {
        return Ok((s3.clone(), client.clone()));
    }
    let mut builder = AmazonS3Builder::from_env().with_url(format!("s3://{bucket}"));
    let mut client_options = ClientOptions::new();
    for (key, value) in sorted {
        if let Ok(k) = AmazonS3ConfigKey::from_str(&key) {
            builder = builder.with_config(k, value);
        }
        if let Ok(k) = ClientConfigKey::from_str(&key) {
            client_options = client_options.with_config(k, value);
        }
    }
    let s3 = builder.with_client_options(client_options.clone()).build().map_err(|e| io("opening the bucket", e))?;
    let client = ReqwestConnector::default().connect(&client_options).map_err(|e| io("opening an HTTP client", e))?;
    // A few buckets at most in practice; a host cycling through many keeps the last ones.
    if clients.len() >= 16 {
        clients.remove(0);
    }
    clients.push((key, s3.clone(), client.clone()));
    Ok((s3, client))
}

/// Every incomplete upload whose key starts with `prefix`, page by page.
async fn list_uploads(s3: &AmazonS3, client: &HttpClient, prefix: &str) -> CResult<Vec<Upload>> {
    let mut uploads = Vec::new();
    let (mut key_marker, mut id_marker) = (String::new(), String::new());
    loop {
        let mut query = vec![("uploads", String::new()), ("prefix", prefix.to_string())];
        if !key_marker.is_empty() {
            query.push(("key-marker", key_marker.clone()));
            query.push(("upload-id-marker", id_marker.clone()));
        }
        let url = s3
            .signed_url_opts(
                http::Method::GET,
                &Path::from(""),
                URL_LIFETIME,
                &SignedUrlOptions::default().with_query(query),
            )
            .await
            .map_err(|e| io("signing the listing of incomplete uploads", e))?;
        let mut request = HttpRequest::new(HttpRequestBody::empty());
        *request.uri_mut() = url.as_str().parse().map_err(|e| io("the listing's URL", e))?;
        let response = client.execute(request).await.map_err(|e| io("listing incomplete uploads", e))?;
        let status = response.status();
        let body =
            response.into_body().bytes().await.map_err(|e| io("reading the listing of incomplete uploads", e))?;
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            return Err(io("listing incomplete uploads", format!("HTTP {status}: {}", text.trim())));
        }
        let page = parse_page(&text)?;
        uploads.extend(page.uploads);
        match page.next {
            // A page that does not move the markers on would repeat forever.
            Some((k, i)) if page.truncated && (k != key_marker || i != id_marker) => {
                (key_marker, id_marker) = (k, i);
            }
            _ => return Ok(uploads),
        }
    }
}

struct Page {
    uploads: Vec<Upload>,
    truncated: bool,
    next: Option<(String, String)>,
}

/// One ListMultipartUploadsResult document.
fn parse_page(xml: &str) -> CResult<Page> {
    let element = |name: &str, within: &str| -> Option<String> {
        let re = Regex::new(&format!("<{name}>([^<]*)</{name}>")).ok()?;
        re.captures(within).map(|c| unescape(&c[1]))
    };
    let upload = Regex::new(r"(?s)<Upload>(.*?)</Upload>").expect("a valid pattern");
    let mut uploads = Vec::new();
    for block in upload.captures_iter(xml) {
        let block = &block[1];
        let (Some(key), Some(id), Some(initiated)) =
            (element("Key", block), element("UploadId", block), element("Initiated", block))
        else {
            return Err(io("an incomplete upload listed without Key, UploadId or Initiated", block));
        };
        let initiated = DateTime::parse_from_rfc3339(&initiated)
            .map_err(|e| io(&format!("the start time '{initiated}' of the upload of {key}"), e))?
            .with_timezone(&Utc);
        uploads.push(Upload { key, id, initiated });
    }
    // The page's own fields come after its uploads are taken out.
    let rest = upload.replace_all(xml, "");
    let truncated = element("IsTruncated", &rest).is_some_and(|v| v == "true");
    let next = element("NextKeyMarker", &rest).zip(element("NextUploadIdMarker", &rest));
    Ok(Page { uploads, truncated, next })
}

/// XML's five predefined entities (keys are text content).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

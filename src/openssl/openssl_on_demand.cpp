#include "openssl_on_demand.hpp"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ssl.h>
#include <openssl/stack.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "on_demand/on_demand_library.hpp"

namespace baton {
namespace {

// libssl needs libcrypto (its DT_NEEDED): opening libssl loads both, and
// each forwarder looks its target up in the library that defines it.
const on_demand_library crypto("libcrypto.so.3", "libssl3", "OpenSSL");
const on_demand_library ssl("libssl.so.3", "libssl3", "OpenSSL");

}  // namespace

std::optional<std::string> openssl_load_error() {
  if (auto error = crypto.load_error()) return error;
  return ssl.load_error();
}

}  // namespace baton

#define BATON_OPENSSL(library, name) BATON_ON_DEMAND_TARGET(baton::library, name)

// The functions baton and asio::ssl call (`objdump -T baton | grep OPENSSL`
// lists them when OpenSSL is linked), with OpenSSL 3's signatures.
extern "C" {

// --- libssl.so.3 ---------------------------------------------------------------

int SSL_CTX_check_private_key(const SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_CTX_check_private_key);
  return target(ctx);
}
long SSL_CTX_ctrl(SSL_CTX* ctx, int cmd, long larg, void* parg) {
  BATON_OPENSSL(ssl, SSL_CTX_ctrl);
  return target(ctx, cmd, larg, parg);
}
void SSL_CTX_free(SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_CTX_free);
  target(ctx);
}
X509* SSL_CTX_get0_certificate(const SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_CTX_get0_certificate);
  return target(ctx);
}
void* SSL_CTX_get_default_passwd_cb_userdata(SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_CTX_get_default_passwd_cb_userdata);
  return target(ctx);
}
void* SSL_CTX_get_ex_data(const SSL_CTX* ssl, int idx) {
  BATON_OPENSSL(ssl, SSL_CTX_get_ex_data);
  return target(ssl, idx);
}
int SSL_CTX_load_verify_locations(SSL_CTX* ctx, const char* CAfile, const char* CApath) {
  BATON_OPENSSL(ssl, SSL_CTX_load_verify_locations);
  return target(ctx, CAfile, CApath);
}
SSL_CTX* SSL_CTX_new(const SSL_METHOD* meth) {
  BATON_OPENSSL(ssl, SSL_CTX_new);
  return target(meth);
}
void SSL_CTX_set_default_passwd_cb(SSL_CTX* ctx, pem_password_cb* cb) {
  BATON_OPENSSL(ssl, SSL_CTX_set_default_passwd_cb);
  target(ctx, cb);
}
void SSL_CTX_set_default_passwd_cb_userdata(SSL_CTX* ctx, void* u) {
  BATON_OPENSSL(ssl, SSL_CTX_set_default_passwd_cb_userdata);
  target(ctx, u);
}
int SSL_CTX_set_default_verify_paths(SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_CTX_set_default_verify_paths);
  return target(ctx);
}
int SSL_CTX_set_ex_data(SSL_CTX* ssl, int idx, void* data) {
  BATON_OPENSSL(ssl, SSL_CTX_set_ex_data);
  return target(ssl, idx, data);
}
uint64_t SSL_CTX_set_options(SSL_CTX* ctx, uint64_t op) {
  BATON_OPENSSL(ssl, SSL_CTX_set_options);
  return target(ctx, op);
}
int SSL_CTX_use_PrivateKey_file(SSL_CTX* ctx, const char* file, int type) {
  BATON_OPENSSL(ssl, SSL_CTX_use_PrivateKey_file);
  return target(ctx, file, type);
}
int SSL_CTX_use_certificate_chain_file(SSL_CTX* ctx, const char* file) {
  BATON_OPENSSL(ssl, SSL_CTX_use_certificate_chain_file);
  return target(ctx, file);
}
int SSL_accept(SSL* ssl) {
  BATON_OPENSSL(ssl, SSL_accept);
  return target(ssl);
}
int SSL_connect(SSL* ssl) {
  BATON_OPENSSL(ssl, SSL_connect);
  return target(ssl);
}
long SSL_ctrl(SSL* ssl, int cmd, long larg, void* parg) {
  BATON_OPENSSL(ssl, SSL_ctrl);
  return target(ssl, cmd, larg, parg);
}
void SSL_free(SSL* ssl) {
  BATON_OPENSSL(ssl, SSL_free);
  target(ssl);
}
int SSL_get_error(const SSL* s, int ret_code) {
  BATON_OPENSSL(ssl, SSL_get_error);
  return target(s, ret_code);
}
void* SSL_get_ex_data(const SSL* ssl, int idx) {
  BATON_OPENSSL(ssl, SSL_get_ex_data);
  return target(ssl, idx);
}
int SSL_get_ex_data_X509_STORE_CTX_idx(void) {
  BATON_OPENSSL(ssl, SSL_get_ex_data_X509_STORE_CTX_idx);
  return target();
}
int SSL_get_shutdown(const SSL* ssl) {
  BATON_OPENSSL(ssl, SSL_get_shutdown);
  return target(ssl);
}
SSL_verify_cb SSL_get_verify_callback(const SSL* s) {
  BATON_OPENSSL(ssl, SSL_get_verify_callback);
  return target(s);
}
int SSL_get_verify_mode(const SSL* s) {
  BATON_OPENSSL(ssl, SSL_get_verify_mode);
  return target(s);
}
SSL* SSL_new(SSL_CTX* ctx) {
  BATON_OPENSSL(ssl, SSL_new);
  return target(ctx);
}
int SSL_read(SSL* ssl, void* buf, int num) {
  BATON_OPENSSL(ssl, SSL_read);
  return target(ssl, buf, num);
}
void SSL_set_bio(SSL* s, BIO* rbio, BIO* wbio) {
  BATON_OPENSSL(ssl, SSL_set_bio);
  target(s, rbio, wbio);
}
int SSL_set_ex_data(SSL* ssl, int idx, void* data) {
  BATON_OPENSSL(ssl, SSL_set_ex_data);
  return target(ssl, idx, data);
}
void SSL_set_verify(SSL* s, int mode, SSL_verify_cb callback) {
  BATON_OPENSSL(ssl, SSL_set_verify);
  target(s, mode, callback);
}
int SSL_write(SSL* ssl, const void* buf, int num) {
  BATON_OPENSSL(ssl, SSL_write);
  return target(ssl, buf, num);
}
const SSL_METHOD* TLS_client_method(void) {
  BATON_OPENSSL(ssl, TLS_client_method);
  return target();
}
const SSL_METHOD* TLS_method(void) {
  BATON_OPENSSL(ssl, TLS_method);
  return target();
}
const SSL_METHOD* TLS_server_method(void) {
  BATON_OPENSSL(ssl, TLS_server_method);
  return target();
}

// --- libcrypto.so.3 ------------------------------------------------------------

const unsigned char* ASN1_STRING_get0_data(const ASN1_STRING* x) {
  BATON_OPENSSL(crypto, ASN1_STRING_get0_data);
  return target(x);
}
int ASN1_STRING_length(const ASN1_STRING* x) {
  BATON_OPENSSL(crypto, ASN1_STRING_length);
  return target(x);
}
long BIO_ctrl(BIO* bp, int cmd, long larg, void* parg) {
  BATON_OPENSSL(crypto, BIO_ctrl);
  return target(bp, cmd, larg, parg);
}
size_t BIO_ctrl_pending(BIO* b) {
  BATON_OPENSSL(crypto, BIO_ctrl_pending);
  return target(b);
}
int BIO_free(BIO* a) {
  BATON_OPENSSL(crypto, BIO_free);
  return target(a);
}
int BIO_new_bio_pair(BIO** bio1, size_t writebuf1, BIO** bio2, size_t writebuf2) {
  BATON_OPENSSL(crypto, BIO_new_bio_pair);
  return target(bio1, writebuf1, bio2, writebuf2);
}
int BIO_read(BIO* b, void* data, int dlen) {
  BATON_OPENSSL(crypto, BIO_read);
  return target(b, data, dlen);
}
int BIO_write(BIO* b, const void* data, int dlen) {
  BATON_OPENSSL(crypto, BIO_write);
  return target(b, data, dlen);
}
void CRYPTO_free(void* ptr, const char* file, int line) {
  BATON_OPENSSL(crypto, CRYPTO_free);
  target(ptr, file, line);
}
int CRYPTO_memcmp(const void* in_a, const void* in_b, size_t len) {
  BATON_OPENSSL(crypto, CRYPTO_memcmp);
  return target(in_a, in_b, len);
}
void ERR_clear_error(void) {
  BATON_OPENSSL(crypto, ERR_clear_error);
  target();
}
unsigned long ERR_get_error(void) {
  BATON_OPENSSL(crypto, ERR_get_error);
  return target();
}
unsigned long ERR_peek_last_error(void) {
  BATON_OPENSSL(crypto, ERR_peek_last_error);
  return target();
}
const char* ERR_reason_error_string(unsigned long e) {
  BATON_OPENSSL(crypto, ERR_reason_error_string);
  return target(e);
}
const EVP_MD* EVP_sha256(void) {
  BATON_OPENSSL(crypto, EVP_sha256);
  return target();
}
void GENERAL_NAMES_free(GENERAL_NAMES* a) {
  BATON_OPENSSL(crypto, GENERAL_NAMES_free);
  target(a);
}
unsigned char* HMAC(const EVP_MD* evp_md, const void* key, int key_len, const unsigned char* data,
                    size_t data_len, unsigned char* md, unsigned int* md_len) {
  BATON_OPENSSL(crypto, HMAC);
  return target(evp_md, key, key_len, data, data_len, md, md_len);
}
int OPENSSL_sk_num(const OPENSSL_STACK* st) {
  BATON_OPENSSL(crypto, OPENSSL_sk_num);
  return target(st);
}
void* OPENSSL_sk_value(const OPENSSL_STACK* st, int i) {
  BATON_OPENSSL(crypto, OPENSSL_sk_value);
  return target(st, i);
}
char* X509_NAME_oneline(const X509_NAME* a, char* buf, int size) {
  BATON_OPENSSL(crypto, X509_NAME_oneline);
  return target(a, buf, size);
}
X509* X509_STORE_CTX_get_current_cert(const X509_STORE_CTX* ctx) {
  BATON_OPENSSL(crypto, X509_STORE_CTX_get_current_cert);
  return target(ctx);
}
int X509_STORE_CTX_get_error(const X509_STORE_CTX* ctx) {
  BATON_OPENSSL(crypto, X509_STORE_CTX_get_error);
  return target(ctx);
}
int X509_STORE_CTX_get_error_depth(const X509_STORE_CTX* ctx) {
  BATON_OPENSSL(crypto, X509_STORE_CTX_get_error_depth);
  return target(ctx);
}
void* X509_STORE_CTX_get_ex_data(const X509_STORE_CTX* ctx, int idx) {
  BATON_OPENSSL(crypto, X509_STORE_CTX_get_ex_data);
  return target(ctx, idx);
}
int X509_check_host(X509* x, const char* chk, size_t chklen, unsigned int flags, char** peername) {
  BATON_OPENSSL(crypto, X509_check_host);
  return target(x, chk, chklen, flags, peername);
}
int X509_check_ip_asc(X509* x, const char* ipasc, unsigned int flags) {
  BATON_OPENSSL(crypto, X509_check_ip_asc);
  return target(x, ipasc, flags);
}
void* X509_get_ext_d2i(const X509* x, int nid, int* crit, int* idx) {
  BATON_OPENSSL(crypto, X509_get_ext_d2i);
  return target(x, nid, crit, idx);
}
X509_NAME* X509_get_subject_name(const X509* a) {
  BATON_OPENSSL(crypto, X509_get_subject_name);
  return target(a);
}
const char* X509_verify_cert_error_string(long n) {
  BATON_OPENSSL(crypto, X509_verify_cert_error_string);
  return target(n);
}

}  // extern "C"

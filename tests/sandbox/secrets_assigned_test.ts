import assert from "node:assert/strict";
import { createStreamMasker, SecretMasker } from "../../src/sandbox/secrets.ts";

const masker = new SecretMasker();
const CMD = "[REDACTED:command-password]";
const SECRET = "[REDACTED:secret]";

function check(cases: [string, string][]) {
  for (const [input, expected] of cases) assert.equal(masker.mask(input), expected, input);
}

Deno.test("SecretMasker.mask() masks the password a command line gives a program, and only it", () => {
  check([
    ["curl -u alice:hunter2pass https://x", `curl -u alice:${CMD} https://x`],
    ["curl -ualice:pw https://x", `curl -ualice:${CMD} https://x`],
    ["curl --user alice:pw https://x", `curl --user alice:${CMD} https://x`],
    ["curl --user=alice:pw https://x", `curl --user=alice:${CMD} https://x`],
    ["curl -x p:3128 --proxy-user bob:pw x", `curl -x p:3128 --proxy-user bob:${CMD} x`],
    ["sudo -E /usr/bin/curl -u 'alice:pw' x", `sudo -E /usr/bin/curl -u 'alice:${CMD}' x`],
    ["env A=1 curl -H 'X: y' -u a:b x", `env A=1 curl -H 'X: y' -u a:${CMD} x`],
    ["curl \\\n  -u alice:pw https://x", `curl \\\n  -u alice:${CMD} https://x`],
    ["mysql -uroot -pS3cret db", `mysql -uroot -p${CMD} db`],
    ["mysqldump -p'S3cret' db", `mysqldump -p'${CMD}' db`],
    ["mysql --password=S3cret db", `mysql --password=${SECRET} db`],
    ["mongosh -u admin -p s3c", `mongosh -u admin -p ${CMD}`],
    ["mongo -psecret", `mongo -p${CMD}`],
    ["sshpass -p secret ssh host", `sshpass -p ${CMD} ssh host`],
    ["docker login -u me -p hunter2 reg.io", `docker login -u me -p ${CMD} reg.io`],
    ["redis-cli -a s3cret ping", `redis-cli -a ${CMD} ping`],
    ["smbclient -U bob%pw //h/s", `smbclient -U bob%${CMD} //h/s`],
    ["wget --password=x https://a", `wget --password=${SECRET} https://a`],
    ["wget --http-password x https://a", `wget --http-password ${SECRET} https://a`],
    ["tool -token abc --api-key k1 x", `tool -token ${SECRET} --api-key ${SECRET} x`],
    ["PGPASSWORD=x psql -h db", `PGPASSWORD=${SECRET} psql -h db`],
    ["git clone https://u:pw@host/r.git", "git clone https://u:[REDACTED:url-password]@host/r.git"],
    // Curl's own option in a container, not docker's.
    [
      "docker run -u 1000:1000 curlimages/curl curl -u a:b x",
      `docker run -u 1000:1000 curlimages/curl curl -u a:${CMD} x`,
    ],
  ]);
});

Deno.test("SecretMasker.mask() leaves options that carry no password alone", () => {
  const text = [
    "docker run -u 1000:1000 -p 8080:80 img",
    "chown -R 1000:1000 . && ps -u root",
    "tar -p -xf a.tgz; ls -p; grep -p x; mkdir -p a/b",
    "gcc -pthread -pipe -o a a.c",
    "mysql -u root -p db",
    "mysql --password db && psql --password -h db app",
    "curl -u alice https://x",
    "curl -s https://x | docker run -u 1000:1000 img",
    "pg_dump --no-password db; tool --ask-password x",
    "wget --password=$PASS https://a",
    "ssh -p 2222 host; scp -P 22 a b:",
  ].join("\n");
  assert.equal(masker.mask(text), text);
});

Deno.test("SecretMasker.mask() masks a value under a secret's name however short or plain", () => {
  check([
    ["MY_SECRET=topsecretvalue", `MY_SECRET=${SECRET}`],
    ["DB_PASSWORD=hunter2", `DB_PASSWORD=${SECRET}`],
    ["export API_TOKEN=abc", `export API_TOKEN=${SECRET}`],
    ["DB_PASS=hunter2 MYSQL_PWD=x ./run", `DB_PASS=${SECRET} MYSQL_PWD=${SECRET} ./run`],
    ['{"password": "hunter2"}', `{"password": "${SECRET}"}`],
    ['{"token":"ab","user":"me"}', `{"token":"${SECRET}","user":"me"}`],
    ["password: hunter2", `password: ${SECRET}`],
    ["  db_password: hunter2   # prod", `  db_password: ${SECRET}   # prod`],
    ["password = hunter2", `password = ${SECRET}`],
    ["spring.datasource.password=hunter2", `spring.datasource.password=${SECRET}`],
    ["run --api-key hunter2 --x", `run --api-key ${SECRET} --x`],
    ["docker run -e 'DB_PASSWORD=pw' img", `docker run -e 'DB_PASSWORD=${SECRET}' img`],
    ["NPM_AUTH=dXNlcjpwYXNz BASIC_AUTH=u:p", `NPM_AUTH=${SECRET} BASIC_AUTH=${SECRET}`],
    ["clientSecret: s3", `clientSecret: ${SECRET}`],
    ["PASSPHRASE=correct horse", `PASSPHRASE=${SECRET} horse`],
  ]);
});

Deno.test("SecretMasker.mask() leaves references, empty values, counts and code under a secret's name alone", () => {
  const text = [
    "password: ${{ secrets.X }}",
    "PASSWORD=",
    "PASSWORD=$DB_PASSWORD",
    "token_count=5 max_tokens=100",
    "tokens: 300",
    "MAX_TOKEN=4096",
    "AUTHOR=bob OAUTH_CLIENT_ID=abc",
    "auth: basic",
    "AUTH=oauth2",
    "const token = getToken();",
    "self.password = password",
    "password = password",
    "password = args.password",
    "    password = user_password",
    "TERN_API_KEY=changeme",
    "API_TOKEN=your-token",
    "token: Token",
    "password: str",
    "f(password=password, token=token)",
    "echo token=getToken; password: userPassword",
    "e.token=t;a.secret=n.secret;",
    "credentials: 'include'",
    "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcloud/key.json",
    "PWD=/home/me OLDPWD=/tmp bypass=yes",
    "private_key: |",
    "password: ********",
    "if (token === x) return;",
    "kill -sig KILL 12",
  ].join("\n");
  assert.equal(masker.mask(text), text);
});

Deno.test("SecretMasker.mask() gives a value under a secret's name the marker of what it is", () => {
  const known = new SecretMasker(["abcdefghij"]);
  const github = "ghp_" + "a1B2c3D4e5F6".repeat(3);
  assert.equal(
    known.mask(`x --token ${github} --auth abcdefghij f(password=abcdefghij)`),
    "x --token [REDACTED:github-token] --auth [REDACTED] f(password=[REDACTED])",
  );
});

Deno.test("SecretMasker.mask() masks a URL query secret of any length", () => {
  check([
    ["https://x/?token=short1&q=1", `https://x/?token=${SECRET}&q=1`],
    ["https://x/a?x=1&access_token=ab", `https://x/a?x=1&access_token=${SECRET}`],
    ["https://x/?api_key=&q=1", "https://x/?api_key=&q=1"],
    ["https://b.blob/c?sv=2&sig=x1%2F", `https://b.blob/c?sv=2&sig=${SECRET}`],
    ["https://s3/k?X-Amz-Signature=ab12", `https://s3/k?X-Amz-Signature=${SECRET}`],
    ["https://x/?password=p&secret=s", `https://x/?password=${SECRET}&secret=${SECRET}`],
    ["https://x/?apikey=1", `https://x/?apikey=${SECRET}`],
  ]);
});

Deno.test("createStreamMasker() masks a command's password split across pieces", () => {
  const text = "$ curl -u alice:hunter2pass https://x\n$ mysql -pS3cret db\n";
  for (let at = 1; at < text.length; at++) {
    const stream = createStreamMasker(masker);
    const out = stream.push(text.slice(0, at)) + stream.push(text.slice(at)) + stream.flush();
    assert.equal(out, masker.mask(text), `cut at ${at}`);
    assert.ok(!out.includes("hunter2pass") && !out.includes("S3cret"), out);
  }
});

Deno.test("SecretMasker.mask() stays linear on a megabyte of crafted options and assignments", () => {
  const curl = new SecretMasker(["abcdefghij"]);
  for (
    const unit of [
      "-u ",
      " -u a:",
      "curl -u a:b ",
      "curl -p",
      "a -p x ",
      " -p",
      "mysql -p'",
      "password: ",
      "--password ",
      "--api-key -",
      "?token=",
      "MY_SECRET=",
      "auth=",
      'password="\\',
      "x=\\\\",
    ]
  ) {
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const started = performance.now();
    const masked = curl.mask(text);
    // Linear work is well under a second here; quadratic would take minutes.
    assert.ok(performance.now() - started < 10_000, unit);
    assert.ok(masked.length > 0 && !masked.startsWith("[REDACTED: text"), unit);
  }
});

package deploy

import (
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// dbSubdir is the kustomization of the optional PostgreSQL, under kubeDir.
const dbSubdir = "postgres"

// database is every object kubernetes/postgres/kustomization.yaml lists.
type database struct {
	kust   kustomization
	sts    *appsv1.StatefulSet
	svc    *corev1.Service
	netpol *networkingv1.NetworkPolicy
}

func loadDatabase(t *testing.T) *database {
	t.Helper()
	dir := filepath.Join(kubeDir, dbSubdir)
	d := database{kust: loadKustomization(t, dir)}
	for _, res := range d.kust.Resources {
		// kustomize refuses a kustomization that includes the directory
		// it sits in (..), and a file outside its own without a flag.
		if filepath.Base(res) != res {
			t.Fatalf("%s/kustomization.yaml: resource %q is not a file of the directory", dir, res)
		}
		for _, obj := range decodeManifest(t, filepath.Join(dir, res)) {
			var dup bool
			switch o := obj.(type) {
			case *appsv1.StatefulSet:
				dup, d.sts = d.sts != nil, o
			case *corev1.Service:
				dup, d.svc = d.svc != nil, o
			case *networkingv1.NetworkPolicy:
				dup, d.netpol = d.netpol != nil, o
			default:
				t.Fatalf("%s/%s: a %T has no place in the database's kustomization", dir, res, obj)
			}
			if dup {
				t.Fatalf("%s/%s: a second %T", dir, res, obj)
			}
		}
	}
	if d.sts == nil || d.svc == nil || d.netpol == nil {
		t.Fatalf("%s/kustomization.yaml: want a StatefulSet, a Service and a NetworkPolicy, got %v", dir, d.kust.Resources)
	}
	return &d
}

// container returns the StatefulSet's postgres container.
func (d *database) container(t *testing.T) *corev1.Container {
	t.Helper()
	cs := d.sts.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "postgres" {
		t.Fatalf("StatefulSet: got %d containers, want the one named postgres", len(cs))
	}
	return &cs[0]
}

// env returns the value of the container's variable name ("" when unset).
func env(t *testing.T, c *corev1.Container, name string) string {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == name {
			if e.ValueFrom != nil {
				t.Fatalf("%s: from %+v, want a value", name, e.ValueFrom)
			}
			return e.Value
		}
	}
	return ""
}

// mountOf returns the mount of c that holds path, and path relative to it.
func mountOf(c *corev1.Container, path string) (corev1.VolumeMount, string, bool) {
	for _, m := range c.VolumeMounts {
		if rel, err := filepath.Rel(m.MountPath, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return m, rel, true
		}
	}
	return corev1.VolumeMount{}, "", false
}

// secretMode checks that a Secret volume's files are readable by the
// owner root and the pod's fsGroup only, and that the fsGroup is the
// group the process runs as.
func secretMode(t *testing.T, who string, pod *corev1.PodSpec, s *corev1.SecretVolumeSource) {
	t.Helper()
	mode := int32(0o644) // the API's default
	if s.DefaultMode != nil {
		mode = *s.DefaultMode
	}
	if mode&0o337 != 0 || mode&0o040 == 0 {
		t.Errorf("%s: Secret %s's files have mode %#o, want read-only for owner and group and nothing for others (0440)", who, s.SecretName, mode)
	}
	if s.Optional != nil && *s.Optional {
		t.Errorf("%s: Secret %s is optional: the pod would start without it", who, s.SecretName)
	}
	psc := pod.SecurityContext
	if psc == nil || psc.FSGroup == nil || psc.RunAsGroup == nil || *psc.FSGroup != *psc.RunAsGroup {
		t.Errorf("%s: pod securityContext %+v, want fsGroup = runAsGroup, the group that reads Secret %s", who, psc, s.SecretName)
	}
}

// TestDatabaseStatefulSet: one PostgreSQL pod, hardened like the fleet's,
// its data on the claim of its volumeClaimTemplate, its password from a
// Secret file.
func TestDatabaseStatefulSet(t *testing.T) {
	d := loadDatabase(t)
	sts := d.sts
	pod := &sts.Spec.Template.Spec
	c := d.container(t)
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 {
		t.Errorf("StatefulSet replicas: got %v, want 1 (the image does not replicate)", sts.Spec.Replicas)
	}
	if !selects(t, sts.Spec.Selector, sts.Spec.Template.Labels) {
		t.Errorf("StatefulSet selector %v does not select its pod template's labels %v", sts.Spec.Selector, sts.Spec.Template.Labels)
	}
	if sts.Spec.ServiceName != d.svc.Name {
		t.Errorf("StatefulSet serviceName %q, want the Service %q", sts.Spec.ServiceName, d.svc.Name)
	}
	// The official image's user postgres.
	hardened(t, "StatefulSet "+sts.Name, pod, c, 999)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[name], c.Resources.Limits[name]
		if req.IsZero() || lim.IsZero() || lim.Cmp(req) < 0 {
			t.Errorf("postgres %s: got request %s and limit %s, want both, limit ≥ request", name, req.String(), lim.String())
		}
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g < 30 {
		t.Errorf("terminationGracePeriodSeconds %v, want ≥ 30 for a fast shutdown's checkpoint", g)
	}

	// PGDATA is a directory in the claim, not its root (lost+found).
	if len(sts.Spec.VolumeClaimTemplates) != 1 {
		t.Fatalf("volumeClaimTemplates: got %d, want one", len(sts.Spec.VolumeClaimTemplates))
	}
	claim := sts.Spec.VolumeClaimTemplates[0]
	pgdata := env(t, c, "PGDATA")
	m, rel, ok := mountOf(c, pgdata)
	if !ok || m.Name != claim.Name || strings.Contains(rel, "/") {
		t.Errorf("PGDATA %q: on mount %+v, want a directory at the root of the claim %q", pgdata, m, claim.Name)
	}
	if !slices.Contains(claim.Spec.AccessModes, corev1.ReadWriteOnce) {
		t.Errorf("claim %s: access modes %v, want ReadWriteOnce", claim.Name, claim.Spec.AccessModes)
	}
	if q := claim.Spec.Resources.Requests[corev1.ResourceStorage]; q.IsZero() {
		t.Errorf("claim %s: no storage request", claim.Name)
	}

	// Every mount is a volume; only the Secret's is read-only.
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, isVol := vols[m.Name]
		if !isVol && m.Name != claim.Name {
			t.Errorf("mount %s: no volume or claim %q", m.MountPath, m.Name)
		}
		if secret := v.Secret != nil; m.ReadOnly != secret {
			t.Errorf("mount %s: read-only %v, want read-only for a Secret's volume and writable for the others", m.MountPath, m.ReadOnly)
		}
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
			t.Errorf("mount %s: emptyDir without sizeLimit", m.MountPath)
		}
	}
	// The socket directory: the root filesystem is read-only.
	if _, _, ok := mountOf(c, "/var/run/postgresql/.s.PGSQL.5432"); !ok {
		t.Error("/var/run/postgresql: no volume, the server cannot create its socket on a read-only root")
	}

	// The password comes from a file of the Secret, never a value.
	if env(t, c, "POSTGRES_PASSWORD") != "" {
		t.Error("POSTGRES_PASSWORD is set in the manifest: want POSTGRES_PASSWORD_FILE")
	}
	pwFile := env(t, c, "POSTGRES_PASSWORD_FILE")
	pm, key, ok := mountOf(c, pwFile)
	if !ok || vols[pm.Name].Secret == nil {
		t.Fatalf("POSTGRES_PASSWORD_FILE %q: not a file of a Secret's volume", pwFile)
	}
	s := vols[pm.Name].Secret
	if s.SecretName != "toolserver-postgres" || key != "password" {
		t.Errorf("POSTGRES_PASSWORD_FILE %q: Secret %q key %q, want toolserver-postgres key password", pwFile, s.SecretName, key)
	}
	secretMode(t, "StatefulSet "+sts.Name, pod, s)
	if env(t, c, "POSTGRES_USER") == "" || env(t, c, "POSTGRES_DB") == "" {
		t.Error("POSTGRES_USER or POSTGRES_DB unset: the DSN's user and database would be postgres")
	}
}

// pgIsReady returns the flags of a pg_isready command line by name (-h,
// -p, -U, -d).
func pgIsReady(t *testing.T, who string, cmd []string) map[string]string {
	t.Helper()
	if len(cmd) == 0 || filepath.Base(cmd[0]) != "pg_isready" {
		t.Fatalf("%s: command %q, want pg_isready", who, cmd)
	}
	out := map[string]string{}
	for i := 1; i < len(cmd); i++ {
		switch cmd[i] {
		case "-h", "-p", "-U", "-d", "-t":
			if i+1 >= len(cmd) {
				t.Fatalf("%s: %q ends in %s", who, cmd, cmd[i])
			}
			out[cmd[i]] = cmd[i+1]
			i++
		case "-q":
		default:
			t.Fatalf("%s: %q: %s is not a flag this test knows", who, cmd, cmd[i])
		}
	}
	return out
}

// checkPgIsReady: a health check of the database asks over TCP on the
// loopback (the first start's server listens on the socket only), on the
// server's port, as the user and database the DSN names (without -U,
// pg_isready of a uid the image does not name makes no attempt). And
// pg_isready itself takes the command line: against a closed loopback
// port it answers 2, no response (3 would be a command line it refuses).
func checkPgIsReady(t *testing.T, who string, cmd []string, port int, user, db string) {
	t.Helper()
	f := pgIsReady(t, who, cmd)
	if f["-h"] != "127.0.0.1" || f["-p"] != strconv.Itoa(port) || f["-U"] != user || f["-d"] != db {
		t.Errorf("%s: %q, want -h 127.0.0.1 -p %d -U %s -d %s", who, cmd, port, user, db)
	}
	bin, err := exec.LookPath("pg_isready")
	if err != nil {
		t.Fatalf("pg_isready is missing (%v): it comes with PostgreSQL's client (Debian's postgresql-client), which make test installs", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(cmd[1:])
	for i := range args {
		if i > 0 && args[i-1] == "-p" {
			args[i] = strconv.Itoa(closed)
		}
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("%s: pg_isready %q against a closed port: %v, want exit status 2 (no response)\n%s", who, args, err, out)
	}
}

// TestDatabaseProbes: startup (initdb, crash recovery), readiness and
// liveness all run pg_isready on the pod's own server.
func TestDatabaseProbes(t *testing.T) {
	d := loadDatabase(t)
	c := d.container(t)
	var pgPort int32
	for _, p := range c.Ports {
		if p.Name == "postgres" {
			pgPort = p.ContainerPort
		}
	}
	if pgPort != 5432 {
		t.Fatalf("container ports %+v, want postgres 5432", c.Ports)
	}
	for _, tc := range []struct {
		name  string
		probe *corev1.Probe
	}{
		{"startup", c.StartupProbe},
		{"readiness", c.ReadinessProbe},
		{"liveness", c.LivenessProbe},
	} {
		if tc.probe == nil || tc.probe.Exec == nil {
			t.Errorf("%s probe: got %+v, want an exec of pg_isready", tc.name, tc.probe)
			continue
		}
		checkPgIsReady(t, tc.name+" probe", tc.probe.Exec.Command, int(pgPort), env(t, c, "POSTGRES_USER"), env(t, c, "POSTGRES_DB"))
	}
	// initdb on a slow volume must not be killed by the liveness probe.
	if p := c.StartupProbe; p != nil && p.PeriodSeconds*p.FailureThreshold < 120 {
		t.Errorf("startup probe: %d × %d s, want at least 2 minutes for initdb or a crash recovery", p.FailureThreshold, p.PeriodSeconds)
	}
}

// TestDatabaseService: the Service selects the database pod only, on its
// port, and the fleet's selectors do not select it.
func TestDatabaseService(t *testing.T) {
	d := loadDatabase(t)
	f := loadFleet(t)
	dbPod, fleetPod := d.sts.Spec.Template.Labels, f.deployment.Spec.Template.Labels
	sel := d.svc.Spec.Selector
	if len(sel) == 0 {
		t.Fatal("database Service: no selector")
	}
	for k, v := range sel {
		if dbPod[k] != v {
			t.Errorf("database Service selector %s=%s: pod template has %s=%q", k, v, k, dbPod[k])
		}
	}
	if selectsSet(sel, fleetPod) {
		t.Errorf("database Service selector %v selects the tool-server pods %v", sel, fleetPod)
	}
	if selectsSet(f.service.Spec.Selector, dbPod) || selects(t, f.pdb.Spec.Selector, dbPod) || selects(t, f.deployment.Spec.Selector, dbPod) {
		t.Errorf("the fleet's selectors select the database pod %v", dbPod)
	}
	if len(d.svc.Spec.Ports) != 1 || d.svc.Spec.Ports[0].Port != 5432 {
		t.Fatalf("database Service ports: got %+v, want one on 5432", d.svc.Spec.Ports)
	}
	if p := port(d.container(t), d.svc.Spec.Ports[0].TargetPort); p != 5432 {
		t.Errorf("database Service targetPort %s: container port %d, want 5432", d.svc.Spec.Ports[0].TargetPort.String(), p)
	}
}

// selectsSet reports whether a Service's selector selects a pod's labels.
func selectsSet(sel, pod map[string]string) bool {
	for k, v := range sel {
		if pod[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// TestDatabaseNetworkPolicy: only the tool-server pods reach the database,
// on its port.
func TestDatabaseNetworkPolicy(t *testing.T) {
	d := loadDatabase(t)
	f := loadFleet(t)
	np := d.netpol.Spec
	dbPod, fleetPod := d.sts.Spec.Template.Labels, f.deployment.Spec.Template.Labels
	if !selects(t, &np.PodSelector, dbPod) {
		t.Errorf("NetworkPolicy podSelector %v does not select the database pod %v", np.PodSelector, dbPod)
	}
	if !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("NetworkPolicy policyTypes %v, want Ingress", np.PolicyTypes)
	}
	if len(np.Ingress) != 1 {
		t.Fatalf("NetworkPolicy: %d ingress rules, want one", len(np.Ingress))
	}
	r := np.Ingress[0]
	if len(r.From) == 0 {
		t.Fatal("NetworkPolicy: an ingress rule from anywhere")
	}
	for _, from := range r.From {
		if from.IPBlock != nil || from.NamespaceSelector != nil || !selects(t, from.PodSelector, fleetPod) {
			t.Errorf("NetworkPolicy: from %+v, want the tool-server pods %v of the namespace", from, fleetPod)
		}
	}
	if len(r.Ports) != 1 || r.Ports[0].Port == nil || r.Ports[0].Port.IntValue() != 5432 ||
		(r.Ports[0].Protocol != nil && *r.Ports[0].Protocol != corev1.ProtocolTCP) {
		t.Errorf("NetworkPolicy ports %+v, want TCP 5432", r.Ports)
	}
}

// TestDatabaseSecrets: postgres/secret.example.yaml's two Secrets are the
// ones the StatefulSet and the Deployment read, and agree: the DSN names
// the database's Service, port, user and database, with its password.
func TestDatabaseSecrets(t *testing.T) {
	d := loadDatabase(t)
	f := loadFleet(t)
	c := d.container(t)
	path := filepath.Join(kubeDir, dbSubdir, "secret.example.yaml")
	pw := secretValue(t, exampleSecret(t, path, "toolserver-postgres"), "password")
	sf := f.storeFile(t)
	dsn := checkDSN(t, path, secretValue(t, exampleSecret(t, path, sf.secret.SecretName), sf.key))
	got, _ := dsn.User.Password()
	if got != pw {
		t.Errorf("%s: the DSN's password %q is not the database's %q", path, got, pw)
	}
	if dsn.Hostname() != d.svc.Name || dsn.Port() != strconv.Itoa(int(d.svc.Spec.Ports[0].Port)) {
		t.Errorf("%s: DSN host %s, want the Service %s:%d", path, dsn.Host, d.svc.Name, d.svc.Spec.Ports[0].Port)
	}
	if u, db := env(t, c, "POSTGRES_USER"), env(t, c, "POSTGRES_DB"); dsn.User.Username() != u || strings.Trim(dsn.Path, "/") != db {
		t.Errorf("%s: DSN user %q database %q, want the StatefulSet's %q and %q", path, dsn.User.Username(), dsn.Path, u, db)
	}
}

// TestDatabaseImagePinned: the database's major version is pinned in the
// kustomization.
func TestDatabaseImagePinned(t *testing.T) {
	d := loadDatabase(t)
	img := d.container(t).Image
	name, tag, _ := strings.Cut(img, ":")
	var pinned string
	for _, i := range d.kust.Images {
		if i.Name == name && i.NewName == "" {
			pinned = i.NewTag
		}
	}
	if _, err := strconv.Atoi(pinned); err != nil || tag != pinned {
		t.Errorf("image %s: kustomization images tag %q, want the major version (a number) pinned, the same in the manifest", img, pinned)
	}
}

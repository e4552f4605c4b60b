// Package deploy holds what runs a fleet of tool-servers: the Kubernetes
// manifests of kubernetes/ and, for one big machine, compose.yaml with
// nginx.conf. No cluster runs in go test: these tests decode every manifest
// strictly into the Kubernetes API types and check what the fleet relies on
// (issue 15, section 3): since issue 30 also its run store, a PostgreSQL
// named by a Secret, and the database of kubernetes/postgres/.
package deploy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const kubeDir = "kubernetes"

// kustomization is the part of kustomize's Kustomization these manifests
// use; a field it does not know fails the strict decode, so a new one gets
// added here on purpose.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors"`
		IncludeTemplates bool              `json:"includeTemplates"`
	} `json:"labels"`
	Resources []string `json:"resources"`
	Images    []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

// fleet is every object the kustomization lists, one of each kind.
type fleet struct {
	kust       kustomization
	deployment *appsv1.Deployment
	service    *corev1.Service
	pvc        *corev1.PersistentVolumeClaim
	hpa        *autoscalingv2.HorizontalPodAutoscaler
	pdb        *policyv1.PodDisruptionBudget
}

// decodeStrict decodes one YAML document into obj and fails on a field obj
// does not have. sigs.k8s.io/yaml's UnmarshalStrict refuses unknown and
// duplicate fields, but encoding/json matches names without regard to case
// (it would take `ReadinessProbe:`), so every key of the document must
// also come back, spelled the same, when obj is encoded again.
func decodeStrict(doc []byte, obj any) error {
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var in any
	if err := json.Unmarshal(js, &in); err != nil {
		return err
	}
	back, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var out any
	if err := json.Unmarshal(back, &out); err != nil {
		return err
	}
	return sameKeys("", in, out)
}

// sameKeys reports the first key of in that out lacks, by its path.
func sameKeys(path string, in, out any) error {
	switch in := in.(type) {
	case map[string]any:
		o, _ := out.(map[string]any)
		for k, v := range in {
			ov, ok := o[k]
			if !ok {
				for ok := range o {
					if strings.EqualFold(ok, k) {
						return fmt.Errorf("field %q: the API spells it %q", path+"."+k, ok)
					}
				}
				if v == nil || v == false || v == 0.0 || v == "" {
					continue // a zero value the type omits when empty
				}
				return fmt.Errorf("unknown field %q", path+"."+k)
			}
			if err := sameKeys(path+"."+k, v, ov); err != nil {
				return err
			}
		}
	case []any:
		o, _ := out.([]any)
		for i, v := range in {
			if i >= len(o) {
				return fmt.Errorf("%s[%d] lost in decoding", path, i)
			}
			if err := sameKeys(fmt.Sprintf("%s[%d]", path, i), v, o[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// kinds maps each kind the kustomization may list to its API version and
// a new object of its type.
var kinds = map[string]struct {
	apiVersion string
	new        func() any
}{
	"Deployment":              {"apps/v1", func() any { return new(appsv1.Deployment) }},
	"Service":                 {"v1", func() any { return new(corev1.Service) }},
	"PersistentVolumeClaim":   {"v1", func() any { return new(corev1.PersistentVolumeClaim) }},
	"HorizontalPodAutoscaler": {"autoscaling/v2", func() any { return new(autoscalingv2.HorizontalPodAutoscaler) }},
	"PodDisruptionBudget":     {"policy/v1", func() any { return new(policyv1.PodDisruptionBudget) }},
	"Secret":                  {"v1", func() any { return new(corev1.Secret) }},
	"StatefulSet":             {"apps/v1", func() any { return new(appsv1.StatefulSet) }},
	"NetworkPolicy":           {"networking.k8s.io/v1", func() any { return new(networkingv1.NetworkPolicy) }},
}

// fleetKinds are the kinds kubernetes/kustomization.yaml lists, one of
// each.
var fleetKinds = []string{"Deployment", "Service", "PersistentVolumeClaim", "HorizontalPodAutoscaler", "PodDisruptionBudget"}

// decodeManifest decodes a file of one or more documents, each strictly
// into the type of its kind.
func decodeManifest(t *testing.T, path string) []any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []any
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("%s, document %d: %v", path, i+1, err)
		}
		k, ok := kinds[tm.Kind]
		if !ok {
			t.Fatalf("%s, document %d: kind %q is not one this test knows", path, i+1, tm.Kind)
		}
		if tm.APIVersion != k.apiVersion {
			t.Errorf("%s: %s has apiVersion %q, want %q", path, tm.Kind, tm.APIVersion, k.apiVersion)
		}
		obj := k.new()
		if err := decodeStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s, document %d (%s): %v", path, i+1, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func stripComments(doc string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(doc, "")
}

// loadFleet reads kustomization.yaml and every manifest it lists.
func loadFleet(t *testing.T) *fleet {
	t.Helper()
	f := fleet{kust: loadKustomization(t, kubeDir)}
	seen := map[string]bool{}
	for _, res := range f.kust.Resources {
		for _, obj := range decodeManifest(t, filepath.Join(kubeDir, res)) {
			var kind string
			switch o := obj.(type) {
			case *appsv1.Deployment:
				kind, f.deployment = "Deployment", o
			case *corev1.Service:
				kind, f.service = "Service", o
			case *corev1.PersistentVolumeClaim:
				kind, f.pvc = "PersistentVolumeClaim", o
			case *autoscalingv2.HorizontalPodAutoscaler:
				kind, f.hpa = "HorizontalPodAutoscaler", o
			case *policyv1.PodDisruptionBudget:
				kind, f.pdb = "PodDisruptionBudget", o
			default:
				t.Fatalf("%s: a %T has no place in the kustomization", res, obj)
			}
			if seen[kind] {
				t.Fatalf("%s: a second %s", res, kind)
			}
			seen[kind] = true
		}
	}
	for _, kind := range fleetKinds {
		if !seen[kind] {
			t.Fatalf("the kustomization lists no %s", kind)
		}
	}
	return &f
}

// loadKustomization strictly decodes dir's kustomization.yaml.
func loadKustomization(t *testing.T, dir string) kustomization {
	t.Helper()
	var k kustomization
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(b, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("%s/kustomization.yaml: got %s %s, want kustomize.config.k8s.io/v1beta1 Kustomization", dir, k.APIVersion, k.Kind)
	}
	return k
}

// container returns the Deployment's toolserver container.
func (f *fleet) container(t *testing.T) *corev1.Container {
	t.Helper()
	cs := f.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != "toolserver" {
		t.Fatalf("Deployment: got %d containers, want the one named toolserver", len(cs))
	}
	return &cs[0]
}

// flag returns the value of --name in the container's args (`--name v` or
// `--name=v`).
func flag(t *testing.T, args []string, name string) string {
	t.Helper()
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	t.Fatalf("args %q: no --%s", args, name)
	return ""
}

// port resolves a probe's or Service's port (a number or a container
// port's name) to the container's port number; 0 when it names none.
func port(c *corev1.Container, p intstr.IntOrString) int32 {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && p.StrVal == cp.Name) || (p.Type == intstr.Int && p.IntVal == cp.ContainerPort) {
			return cp.ContainerPort
		}
	}
	return 0
}

// TestDecodeStrictRefuses: the decoder the manifests go through refuses
// what a cluster's strict field validation refuses.
func TestDecodeStrictRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"unknown field", "apiVersion: v1\nkind: Service\nspec:\n  selectr: {a: b}\n"},
		{"field of the wrong case", "apiVersion: v1\nkind: Service\nspec:\n  Selector: {a: b}\n"},
		{"nested unknown field", "apiVersion: v1\nkind: Service\nspec:\n  ports:\n    - port: 3000\n      targetport: 3000\n"},
		{"duplicate field", "apiVersion: v1\nkind: Service\nspec:\n  type: ClusterIP\n  type: NodePort\n"},
		{"wrong type", "apiVersion: v1\nkind: Service\nspec:\n  ports: 3000\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := decodeStrict([]byte(tc.doc), new(corev1.Service)); err == nil {
				t.Errorf("decodeStrict(%q): got nil, want an error", tc.doc)
			}
		})
	}
	ok := "apiVersion: v1\nkind: Service\nspec:\n  selector: {a: b}\n  ports:\n    - port: 3000\n      targetPort: http\n"
	if err := decodeStrict([]byte(ok), new(corev1.Service)); err != nil {
		t.Errorf("decodeStrict(%q): %v", ok, err)
	}
}

func TestProbes(t *testing.T) {
	f := loadFleet(t)
	c := f.container(t)
	if got := flag(t, c.Args, "addr"); got != "0.0.0.0:3000" {
		t.Errorf("--addr: got %q, want 0.0.0.0:3000", got)
	}
	for _, tc := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"readiness", c.ReadinessProbe, "/readyz"},
		{"liveness", c.LivenessProbe, "/healthz"},
	} {
		if tc.probe == nil || tc.probe.HTTPGet == nil {
			t.Errorf("%s probe: got %+v, want an httpGet", tc.name, tc.probe)
			continue
		}
		g := tc.probe.HTTPGet
		if g.Path != tc.path {
			t.Errorf("%s probe: got path %q, want %q", tc.name, g.Path, tc.path)
		}
		if p := port(c, g.Port); p != 3000 {
			t.Errorf("%s probe: port %s is container port %d, want 3000", tc.name, g.Port.String(), p)
		}
		if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
			t.Errorf("%s probe: got scheme %s, want HTTP", tc.name, g.Scheme)
		}
		// The two probe routes answer without the token; a token in a
		// probe would sit in the manifest in plain text.
		if len(g.HTTPHeaders) != 0 {
			t.Errorf("%s probe: got headers %v, want none", tc.name, g.HTTPHeaders)
		}
	}
}

func TestSecurityContext(t *testing.T) {
	f := loadFleet(t)
	// The image's user toolserver (docker/Dockerfile).
	hardened(t, "Deployment "+f.deployment.Name, &f.deployment.Spec.Template.Spec, f.container(t), 10001)
}

// hardened checks that container c of pod runs as uid, non-root, on a
// read-only root, without privileges, capabilities or host namespaces,
// under RuntimeDefault seccomp.
func hardened(t *testing.T, who string, pod *corev1.PodSpec, c *corev1.Container, uid int64) {
	t.Helper()
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if sc == nil {
		t.Fatalf("%s, container %s: no securityContext", who, c.Name)
	}
	// A container's setting wins over the pod's.
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = psc.RunAsNonRoot
	}
	if nonRoot == nil || !*nonRoot {
		t.Errorf("%s: runAsNonRoot: got unset or false, want true", who)
	}
	u := sc.RunAsUser
	if u == nil {
		u = psc.RunAsUser
	}
	if u == nil || *u != uid {
		t.Errorf("%s: runAsUser: got %v, want %d (the image's user)", who, u, uid)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem: got unset or false, want true", who)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation: got unset or true, want false", who)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged: got true, want false", who)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) != 0 {
		t.Errorf("%s: capabilities: got %+v, want drop [ALL] and nothing added", who, sc.Capabilities)
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = psc.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: seccompProfile: got %+v, want RuntimeDefault", who, seccomp)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("%s: the pod shares a host namespace", who)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken: got unset or true, want false (it never talks to the Kubernetes API)", who)
	}
}

// TestWritableDirs: with a read-only root, every directory the server
// writes is a volume: /tmp (Chromium's profiles, temp files) from an
// emptyDir, the uploads from the shared claim. The runs are in the
// database: no --state-dir and no emptyDir for them (issue 30), only /tmp.
// The one read-only mount is the Secret of the run store.
func TestWritableDirs(t *testing.T) {
	f := loadFleet(t)
	c := f.container(t)
	vols := map[string]corev1.Volume{}
	for _, v := range f.deployment.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	mounts := map[string]corev1.Volume{}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s: no volume %q", m.MountPath, m.Name)
		}
		if secret := v.Secret != nil; m.ReadOnly != secret {
			t.Errorf("mount %s: read-only %v, want read-only for a Secret's volume and writable for the others", m.MountPath, m.ReadOnly)
		}
		mounts[m.MountPath] = v
	}
	v, ok := mounts["/tmp"]
	if !ok || v.EmptyDir == nil {
		t.Errorf("/tmp: got volume %+v, want an emptyDir", v.VolumeSource)
	} else if v.EmptyDir.SizeLimit == nil {
		t.Error("/tmp: emptyDir without sizeLimit")
	}
	for dir, v := range mounts {
		if v.EmptyDir != nil && dir != "/tmp" {
			t.Errorf("%s: an emptyDir (%s), want none but /tmp: the run store is the database, not a per-pod directory", dir, v.Name)
		}
	}
	for _, v := range f.deployment.Spec.Template.Spec.Volumes {
		if v.EmptyDir != nil && mounts["/tmp"].Name != v.Name {
			t.Errorf("volume %s: an emptyDir not mounted at /tmp", v.Name)
		}
	}
	if hasFlag(c.Args, "state-dir") {
		t.Errorf("args %q: --state-dir, want the run store in PostgreSQL (TOOLSERVER_STORE_FILE)", c.Args)
	}
	// The image's default state directory ($XDG_STATE_HOME/toolserver).
	if _, ok := mounts["/var/lib/toolserver"]; ok {
		t.Error("/var/lib/toolserver: mounted, want no per-pod run store")
	}
}

// hasFlag reports whether args give --name.
func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return a == "--"+name || strings.HasPrefix(a, "--"+name+"=")
	})
}

// exampleSecret decodes path and returns its Secret of the given name.
func exampleSecret(t *testing.T, path, name string) *corev1.Secret {
	t.Helper()
	for _, obj := range decodeManifest(t, path) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			t.Fatalf("%s: a %T, want Secrets only", path, obj)
		}
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("%s: no Secret %q", path, name)
	return nil
}

// secretValue returns key of s, from stringData or data.
func secretValue(t *testing.T, s *corev1.Secret, key string) string {
	t.Helper()
	if v, ok := s.StringData[key]; ok {
		return v
	}
	if v, ok := s.Data[key]; ok {
		return string(v)
	}
	t.Fatalf("Secret %s: no key %q (stringData %v)", s.Name, key, s.StringData)
	return ""
}

// storeFile is where the Deployment's run store DSN comes from: the file
// TOOLSERVER_STORE_FILE names, the Secret volume mounted over it and the
// key of that Secret it is.
type storeFile struct {
	path   string
	mount  corev1.VolumeMount
	secret *corev1.SecretVolumeSource
	key    string
}

func (f *fleet) storeFile(t *testing.T) storeFile {
	t.Helper()
	c := f.container(t)
	var sf storeFile
	for _, e := range c.Env {
		switch e.Name {
		case "TOOLSERVER_STORE_FILE":
			if e.ValueFrom != nil || !filepath.IsAbs(e.Value) {
				t.Fatalf("TOOLSERVER_STORE_FILE: got %+v, want the absolute path of the mounted Secret's file", e)
			}
			sf.path = e.Value
		case "TOOLSERVER_STORE":
			// The password would be in the environment of serve and
			// every process it starts.
			t.Errorf("TOOLSERVER_STORE in the env (%+v): want the DSN from a file, TOOLSERVER_STORE_FILE", e)
		}
	}
	if sf.path == "" {
		t.Fatal("no TOOLSERVER_STORE_FILE in the container's env: the fleet's runs would stay per pod")
	}
	for _, m := range c.VolumeMounts {
		if rel, err := filepath.Rel(m.MountPath, sf.path); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			sf.mount, sf.key = m, rel
		}
	}
	if sf.mount.Name == "" {
		t.Fatalf("TOOLSERVER_STORE_FILE %s: under no mount", sf.path)
	}
	for _, v := range f.deployment.Spec.Template.Spec.Volumes {
		if v.Name == sf.mount.Name {
			sf.secret = v.Secret
		}
	}
	if sf.secret == nil {
		t.Fatalf("TOOLSERVER_STORE_FILE %s: volume %q is not a Secret", sf.path, sf.mount.Name)
	}
	// A Secret's items may give a key another file name.
	if len(sf.secret.Items) > 0 {
		key := ""
		for _, it := range sf.secret.Items {
			if it.Path == sf.key {
				key = it.Key
			}
		}
		if key == "" {
			t.Fatalf("TOOLSERVER_STORE_FILE %s: Secret %s's items %+v have no %s", sf.path, sf.secret.SecretName, sf.secret.Items, sf.key)
		}
		sf.key = key
	}
	return sf
}

// TestRunStore: the DSN of the fleet's PostgreSQL is a file of the Secret
// toolserver-store, mounted read-only, readable by the server's user and
// nobody else; the Secret is the example's, which the kustomization leaves
// out (no password in git); nothing in the args or env holds a DSN.
func TestRunStore(t *testing.T) {
	f := loadFleet(t)
	c := f.container(t)
	sf := f.storeFile(t)
	if !sf.mount.ReadOnly {
		t.Errorf("mount %s: writable, want readOnly", sf.mount.MountPath)
	}
	if sf.secret.SecretName != "toolserver-store" || sf.key != "dsn" {
		t.Errorf("TOOLSERVER_STORE_FILE %s: Secret %q key %q, want toolserver-store key dsn", sf.path, sf.secret.SecretName, sf.key)
	}
	if sf.secret.Optional != nil && *sf.secret.Optional {
		t.Error("the store's Secret volume is optional: a pod would start without its store")
	}
	// The files are root's; under the pod's fsGroup their group is it, and
	// group read is what lets the server's user read them.
	mode := int32(0o644) // the API's default
	if sf.secret.DefaultMode != nil {
		mode = *sf.secret.DefaultMode
	}
	for _, it := range sf.secret.Items {
		if it.Path == filepath.Base(sf.path) && it.Mode != nil {
			mode = *it.Mode
		}
	}
	if mode&0o337 != 0 || mode&0o040 == 0 {
		t.Errorf("the store's Secret files: mode %#o, want read-only for owner and group and nothing for others (0440)", mode)
	}
	psc := f.deployment.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.FSGroup == nil || psc.RunAsGroup == nil || *psc.FSGroup != *psc.RunAsGroup {
		t.Errorf("pod securityContext %+v: want fsGroup = runAsGroup, the group that reads the store's file", psc)
	}
	for _, a := range c.Args {
		if strings.Contains(a, "://") {
			t.Errorf("args: %q looks like a DSN, want it only in the Secret", a)
		}
	}
	if hasFlag(c.Args, "store") || hasFlag(c.Args, "store-file") {
		t.Errorf("args %q: --store or --store-file, want TOOLSERVER_STORE_FILE alone", c.Args)
	}
	for _, e := range c.Env {
		if strings.Contains(e.Value, "://") {
			t.Errorf("env %s: %q looks like a DSN, want it only in the Secret", e.Name, e.Value)
		}
	}
	if slices.Contains(f.kust.Resources, "secret-store.example.yaml") {
		t.Error("the kustomization lists secret-store.example.yaml: its placeholder DSN would be applied")
	}
	s := exampleSecret(t, filepath.Join(kubeDir, "secret-store.example.yaml"), sf.secret.SecretName)
	dsn := checkDSN(t, "secret-store.example.yaml", secretValue(t, s, sf.key))
	// A CA file the DSN names is a key of the same Secret, so a file of
	// the mount.
	if root := dsn.Query().Get("sslrootcert"); root != "" {
		rel, err := filepath.Rel(sf.mount.MountPath, root)
		if err != nil || strings.Contains(rel, "/") || strings.HasPrefix(rel, "..") {
			t.Errorf("secret-store.example.yaml: sslrootcert %s is not a file of the mount %s", root, sf.mount.MountPath)
		} else {
			secretValue(t, s, rel)
		}
	}
}

// checkDSN parses a PostgreSQL DSN as serve's --store takes it.
func checkDSN(t *testing.T, where, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: DSN %q: %v", where, dsn, err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Errorf("%s: DSN scheme %q, want postgres", where, u.Scheme)
	}
	if _, set := u.User.Password(); u.User.Username() == "" || !set {
		t.Errorf("%s: DSN %q without a user and password", where, dsn)
	}
	if u.Hostname() == "" || u.Port() != "5432" || strings.Trim(u.Path, "/") == "" {
		t.Errorf("%s: DSN %q, want HOST:5432/DB", where, dsn)
	}
	if u.Query().Get("sslmode") == "" {
		t.Errorf("%s: DSN %q names no sslmode (the driver's default, prefer, falls back to plain text unseen)", where, dsn)
	}
	return u
}

// TestRunLease: the lease and takeover flags the fleet's comments explain
// are values serve takes.
func TestRunLease(t *testing.T) {
	f := loadFleet(t)
	checkLease(t, "Deployment", f.container(t).Args)
}

func checkLease(t *testing.T, who string, args []string) {
	t.Helper()
	if d, err := time.ParseDuration(flag(t, args, "run-lease")); err != nil || d <= 0 {
		t.Errorf("%s: --run-lease %q, want a positive duration (%v)", who, flag(t, args, "run-lease"), err)
	}
	if n, err := strconv.Atoi(flag(t, args, "max-attempts")); err != nil || n < 1 {
		t.Errorf("%s: --max-attempts %q, want a number ≥ 1 (%v)", who, flag(t, args, "max-attempts"), err)
	}
}

func TestResources(t *testing.T) {
	f := loadFleet(t)
	r := f.container(t).Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := r.Requests[name]
		lim, okLim := r.Limits[name]
		if !okReq || !okLim || req.IsZero() || lim.IsZero() {
			t.Errorf("%s: got request %v and limit %v, want both set", name, req.String(), lim.String())
			continue
		}
		if lim.Cmp(req) < 0 {
			t.Errorf("%s: limit %s < request %s", name, lim.String(), req.String())
		}
	}
}

// preStopSleep returns how long the container's preStop hook sleeps.
func preStopSleep(t *testing.T, c *corev1.Container) time.Duration {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		t.Fatal("container: no preStop hook")
	}
	h := c.Lifecycle.PreStop
	switch {
	case h.Sleep != nil:
		return time.Duration(h.Sleep.Seconds) * time.Second
	case h.Exec != nil && len(h.Exec.Command) == 2 && filepath.Base(h.Exec.Command[0]) == "sleep":
		n, err := strconv.Atoi(h.Exec.Command[1])
		if err != nil {
			t.Fatalf("preStop %q: %v", h.Exec.Command, err)
		}
		return time.Duration(n) * time.Second
	}
	t.Fatalf("preStop: got %+v, want a sleep", h)
	return 0
}

// TestDrainFits: the kubelet sends SIGTERM after the preStop hook and
// SIGKILL terminationGracePeriodSeconds after it started the hook, so the
// grace period must cover the sleep and the whole drain.
func TestDrainFits(t *testing.T) {
	f := loadFleet(t)
	c := f.container(t)
	drain, err := time.ParseDuration(flag(t, c.Args, "drain-timeout"))
	if err != nil {
		t.Fatalf("--drain-timeout: %v", err)
	}
	sleep := preStopSleep(t, c)
	if sleep <= 0 {
		t.Errorf("preStop sleeps %v, want a few seconds for the endpoints to be updated", sleep)
	}
	g := f.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds
	if g == nil {
		t.Fatal("terminationGracePeriodSeconds: unset (30 s by default)")
	}
	if grace := time.Duration(*g) * time.Second; grace <= drain+sleep {
		t.Errorf("terminationGracePeriodSeconds: got %v, want more than --drain-timeout %v + preStop %v", grace, drain, sleep)
	}
}

// TestToken: the token comes from the Secret that secret.example.yaml
// shows, which the kustomization leaves out (no token in git).
func TestToken(t *testing.T) {
	f := loadFleet(t)
	var ref *corev1.SecretKeySelector
	for _, e := range f.container(t).Env {
		if e.Name == "ARGENT_AUTH_TOKEN" {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Fatalf("ARGENT_AUTH_TOKEN: got %+v, want a secretKeyRef", e)
			}
			ref = e.ValueFrom.SecretKeyRef
		}
	}
	if ref == nil {
		t.Fatal("no ARGENT_AUTH_TOKEN in the container's env: a wildcard bind refuses to start")
	}
	if ref.Optional != nil && *ref.Optional {
		t.Error("the token's secretKeyRef is optional: a pod would start without it")
	}
	if slices.Contains(f.kust.Resources, "secret.example.yaml") {
		t.Error("the kustomization lists secret.example.yaml: its placeholder token would be applied")
	}
	secretValue(t, exampleSecret(t, filepath.Join(kubeDir, "secret.example.yaml"), ref.Name), ref.Key)
}

// TestUploadVolume: --upload-dir is the mount of the shared claim, which
// every replica can write at once.
func TestUploadVolume(t *testing.T) {
	f := loadFleet(t)
	c := f.container(t)
	dir := flag(t, c.Args, "upload-dir")
	var mount *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if m.MountPath == dir {
			mount = &c.VolumeMounts[i]
		}
	}
	if mount == nil {
		t.Fatalf("--upload-dir %s: nothing mounted there", dir)
	}
	var claim string
	for _, v := range f.deployment.Spec.Template.Spec.Volumes {
		if v.Name == mount.Name && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != f.pvc.Name {
		t.Errorf("--upload-dir %s: volume %q is claim %q, want the kustomization's %q", dir, mount.Name, claim, f.pvc.Name)
	}
	if !slices.Contains(f.pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("PVC %s: got access modes %v, want ReadWriteMany", f.pvc.Name, f.pvc.Spec.AccessModes)
	}
	if q := f.pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.IsZero() {
		t.Errorf("PVC %s: no storage request", f.pvc.Name)
	}
}

// selects reports whether sel selects a pod with the given labels.
func selects(t *testing.T, sel *metav1.LabelSelector, pod map[string]string) bool {
	t.Helper()
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return false // selects everything in the namespace
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return s.Matches(labels.Set(pod))
}

func TestServiceSelectsPods(t *testing.T) {
	f := loadFleet(t)
	d, svc := f.deployment, f.service
	pod := d.Spec.Template.Labels
	if !selects(t, d.Spec.Selector, pod) {
		t.Errorf("Deployment selector %v does not select its pod template's labels %v", d.Spec.Selector, pod)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Fatal("Service: no selector")
	}
	for k, v := range svc.Spec.Selector {
		if pod[k] != v {
			t.Errorf("Service selector %s=%s: pod template has %s=%q", k, v, k, pod[k])
		}
	}
	if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service type: got %s, want ClusterIP", svc.Spec.Type)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 3000 {
		t.Fatalf("Service ports: got %+v, want one on 3000", svc.Spec.Ports)
	}
	if p := port(f.container(t), svc.Spec.Ports[0].TargetPort); p != 3000 {
		t.Errorf("Service targetPort %s: container port %d, want 3000", svc.Spec.Ports[0].TargetPort.String(), p)
	}
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("Service sessionAffinity: got %q, want ClientIP", svc.Spec.SessionAffinity)
	}
}

func TestAutoscaler(t *testing.T) {
	f := loadFleet(t)
	ref := f.hpa.Spec.ScaleTargetRef
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != f.deployment.Name {
		t.Errorf("HPA scaleTargetRef: got %+v, want apps/v1 Deployment %s", ref, f.deployment.Name)
	}
	var cpu bool
	for _, m := range f.hpa.Spec.Metrics {
		cpu = cpu || (m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU)
	}
	if !cpu {
		t.Errorf("HPA metrics: got %+v, want a Resource metric on cpu", f.hpa.Spec.Metrics)
	}
	lo := f.hpa.Spec.MinReplicas
	if lo == nil || *lo < 2 || f.hpa.Spec.MaxReplicas < *lo {
		t.Errorf("HPA: got minReplicas %v maxReplicas %d, want 2 ≤ min ≤ max", lo, f.hpa.Spec.MaxReplicas)
	}
}

func TestDisruptionBudget(t *testing.T) {
	f := loadFleet(t)
	pdb := f.pdb
	if !selects(t, pdb.Spec.Selector, f.deployment.Spec.Template.Labels) {
		t.Errorf("PDB selector %v does not select the pods %v", pdb.Spec.Selector, f.deployment.Spec.Template.Labels)
	}
	avail := pdb.Spec.MinAvailable
	if avail == nil || avail.Type != intstr.Int || avail.IntVal < 1 {
		t.Fatalf("PDB minAvailable: got %v, want a number ≥ 1", avail)
	}
	// An eviction must stay possible, or a node drain waits forever.
	r, lo := f.deployment.Spec.Replicas, f.hpa.Spec.MinReplicas
	if r == nil || lo == nil {
		t.Fatal("Deployment replicas or HPA minReplicas unset")
	}
	if avail.IntVal >= *r || avail.IntVal >= *lo {
		t.Errorf("PDB minAvailable %d: want fewer than the Deployment's replicas %d and the HPA's minReplicas %d", avail.IntVal, *r, *lo)
	}
}

// TestManifestsAreListed: every .yaml file in kubernetes/ and in
// kubernetes/postgres/ is listed by its kustomization or is a Secret
// example, so none is forgotten; every directory under kubernetes/ is a
// kustomization of its own.
func TestManifestsAreListed(t *testing.T) {
	f := loadFleet(t)
	examples := map[string][]string{
		kubeDir:                          {"secret.example.yaml", "secret-store.example.yaml"},
		filepath.Join(kubeDir, dbSubdir): {"secret.example.yaml"},
	}
	for dir, ex := range examples {
		k := loadKustomization(t, dir)
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range files {
			name := filepath.Base(p)
			if name != "kustomization.yaml" && !slices.Contains(ex, name) && !slices.Contains(k.Resources, name) {
				t.Errorf("%s is not in %s/kustomization.yaml", name, dir)
			}
		}
		for _, name := range ex {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: %v", dir, err)
			}
			if slices.Contains(k.Resources, name) {
				t.Errorf("%s/kustomization.yaml lists %s: its placeholder would be applied", dir, name)
			}
		}
	}
	subdirs, err := filepath.Glob(filepath.Join(kubeDir, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range subdirs {
		if _, known := examples[filepath.Dir(p)]; !known {
			t.Errorf("%s: in a directory this test does not know", p)
		}
	}
	if len(f.kust.Images) != 1 || f.kust.Images[0].Name != "toolserver" {
		t.Errorf("kustomization images: got %+v, want the one entry for toolserver", f.kust.Images)
	}
	if !strings.HasPrefix(f.container(t).Image, "toolserver:") {
		t.Errorf("image: got %q, want toolserver:TAG (the kustomization's images entry renames it)", f.container(t).Image)
	}
}

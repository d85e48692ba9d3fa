/// The studio's publishing form: the exact document to sign, the rollout, and the
/// signature, pasted (made with `onboarding-server keys sign`) or made in the browser from the
/// publisher's key file, which never leaves it (``signingScript``; the form works without it).
extension InsightsPage {
    public struct PublishForm: Sendable, Equatable {
        public var heading: String
        public var action: String
        /// The canonical document text a signature covers.
        public var document: String
        public var hidden: [Form.Field]
        public var rollout: Int
        /// The newest registered key's id, as a suggestion.
        public var key: String
        public var signature: String
        public var submit: String

        public init(
            heading: String, action: String, document: String, hidden: [Form.Field], rollout: Int,
            key: String, signature: String,
            submit: String
        ) {
            self.heading = heading
            self.action = action
            self.document = document
            self.hidden = hidden
            self.rollout = rollout
            self.key = key
            self.signature = signature
            self.submit = submit
        }
    }

    static func renderPublish(_ form: PublishForm, id: String, into html: HTML) {
        html.raw("<section class=\"publish\" aria-labelledby=\"\(id)\">\n<h2 id=\"\(id)\">").text(
            form.heading
        ).raw("</h2>\n")
        html.raw("<form method=\"post\" data-signing action=\"").text(form.action).raw("\">\n")
        for field in form.hidden {
            html.raw("<input type=\"hidden\" name=\"").text(field.name).raw("\" value=\"").text(field.value)
                .raw("\">")
        }
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-doc\">The document a signature covers (as it is \
            stored)</label>
            """
        )
        html.raw("<textarea id=\"\(id)-doc\" readonly rows=\"3\">").text(form.document).raw(
            "</textarea></div>\n")
        html.raw("<div class=\"field\"><label for=\"\(id)-rollout\">Rollout (% of subjects, 0-100)</label>")
        html.raw(
            """
            <input id=\"\(id)-rollout\" name=\"rollout\" type=\"number\" min=\"0\" max=\"100\" required \
            value=\"\(form.rollout)\"></div>\n
            """
        )
        html.raw(
            """
            <fieldset><legend>Guarded rollout (optional): the rollout guard raises it stage by stage and \
            rolls it back on a drop</legend>
            """
        )
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-stages\">Stages, rising percentages (5,25,50,100; empty: \
            the rollout above, set by hand)</label>
            """
        )
        html.raw(
            """
            <input id=\"\(id)-stages\" name=\"stages\" type=\"text\" inputmode=\"numeric\" \
            value=\"\"></div>\n
            """
        )
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-guard\">Guardrail: completion:-2pp, \
            or step:STEP:-1pp (the drop tolerated, in points)</label>
            """
        )
        html.raw("<input id=\"\(id)-guard\" name=\"guard\" type=\"text\" value=\"completion:-2pp\"></div>\n")
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-stage-time\">Each stage at least (90s, 30m, 12h, \
            1d)</label>
            """
        )
        html.raw("<input id=\"\(id)-stage-time\" name=\"stage_time\" type=\"text\" value=\"1d\"></div>\n")
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-stage-subjects\">And at least this many subjects \
            starting the flow on it per stage</label>
            """
        )
        html.raw(
            """
            <input id=\"\(id)-stage-subjects\" name=\"stage_subjects\" type=\"number\" min=\"0\" \
            value=\"500\"></div></fieldset>\n
            """
        )
        html.raw(
            """
            <div class=\"signer field\" hidden><label for=\"\(id)-keyfile\">Sign here with your key file (it \
            stays in this browser)</label>
            """
        )
        html.raw(
            """
            <input id=\"\(id)-keyfile\" type=\"file\" accept=\".json,application/json\"><p class=\"note \
            signer-status\" role=\"status\"></p></div>\n
            """
        )
        html.raw("<div class=\"field\"><label for=\"\(id)-key\">Signing key id</label>")
        html.raw("<input id=\"\(id)-key\" name=\"key\" type=\"text\" required value=\"").text(form.key).raw(
            "\"></div>\n")
        html.raw(
            """
            <div class=\"field\"><label for=\"\(id)-sig\">Signature (base64; or `onboarding-server keys \
            sign` of the document)</label>
            """
        )
        html.raw("<textarea id=\"\(id)-sig\" name=\"signature\" rows=\"2\" required>").text(form.signature)
            .raw("</textarea></div>\n")
        html.raw("<button type=\"submit\">").text(form.submit).raw("</button></form>\n</section>\n")
    }

    /// Signs the form's document with the Ed25519 key of a key file the publisher picks (the
    /// `onboarding-server keys new` format), in the browser: the key is read and used there and
    /// never sent; only the signature is. Allowed by its hash in the page's policy.
    public static let signingScript = """
        (() => {
          const form = document.querySelector('form[data-signing]');
          if (!form || !window.crypto || !crypto.subtle) return;
          const box = form.querySelector('.signer'), status = box.querySelector('.signer-status');
          box.hidden = false;
          async function sign(text) {
            const key = JSON.parse(text);
            if (key.format !== 'onboarding-publication-signing-key') throw new Error('not a key file of \
        onboarding-server keys new');
            const seed = Uint8Array.from(atob(key.privateKey), c => c.charCodeAt(0));
            if (seed.length !== 32) throw new Error('the key file holds no 32-byte key');
            const der = new Uint8Array(48);
            der.set([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, \
        0x04, 0x20]);
            der.set(seed, 16);
            const privateKey = await crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, false, \
        ['sign']);
            const message = new TextEncoder().encode('onboarding catalog publication v1\\n' + \
        form.querySelector('textarea[readonly]').value);
            const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, \
        message));
            form.querySelector('[name=signature]').value = btoa(String.fromCharCode(...signature));
            form.querySelector('[name=key]').value = key.id;
            status.textContent = 'Signed in this browser with key ' + key.id + '; the key was not sent.';
          }
          window.studioSign = sign;
          box.querySelector('input[type=file]').addEventListener('change', async event => {
            try { await sign(await event.target.files[0].text()); } catch (error) { status.textContent = \
        'Not signed: ' + error.message; }
          });
        })();
        """
}

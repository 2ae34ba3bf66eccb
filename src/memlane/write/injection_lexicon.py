"""Instructions to a model in other languages than English, by family.

The same acts as write.injection_patterns (override the model's instructions, replace
its identity, hide from the user, write its memory, send data out, address it
directly) in the languages memlane's users write in: Spanish, French, German,
Italian, Portuguese, Dutch, Polish, Czech, Russian, Ukrainian, Chinese, Japanese,
Korean, Arabic, Hebrew, Hindi, Bengali, Vietnamese, Thai, Turkish, Indonesian,
Swedish and Swahili. Patterns name the act's own words; a language without spaces
between words is matched without word boundaries.
"""

from __future__ import annotations

# The model's instructions, earlier or of the system.
_INSTR = (
    r"(?:instrucciones|indicaciones|directrices|instructions|consignes|directives|anweisungen"
    r"|instruktionen|vorgaben|regeln|istruzioni|indicazioni|instruções|instrucoes|diretrizes"
    r"|instructies|aanwijzingen|instrukcje|polecenia|instrukce|pokyny|инструкции|указания"
    r"|инструкций|указаний|правила|інструкції|вказівки|instruksi|petunjuk|talimatlar\w*"
    r"|instruktioner|maagizo|hướng\s+dẫn|chỉ\s+dẫn|chỉ\s+thị)"
)
_BEFORE = (
    r"(?:anteriores|previas|precedentes|précédentes|antérieures|vorherigen|bisherigen|früheren"
    r"|alle|precedenti|anteriori|vorige|eerdere|poprzednie|wcześniejsze|předchozí|предыдущие"
    r"|прежние|все|попередні|sebelumnya|önceki|tidigare|föregående|za\s+awali|trước\s+đó"
    r"|todas\s+las|toutes\s+les|tutte\s+le|todas\s+as|wszystkie|ricevute|finora|recibidas|reçues"
    r"|erhaltenen|recebidas|ontvangen|otrzymane|полученные|до\s+этого|hasta\s+ahora|jusqu'ici|até\s+agora)"
)
_IGNORE = (
    r"(?:ignora\w*|ignore[zs]?|olvida\w*|olvíd\w*|descarta\w*|omite|oublie\w*|ignorier\w*|vergiss"
    r"|vergessen|missachte\w*|dimentica\w*|esqueç\w*|desconsider\w*|negeer|vergeet|zignoruj"
    r"|ignoruj|zapomnij|zapomeň|игнорируй\w*|проигнорируй|забудь|ігноруй|забудь|abaikan|lupakan"
    r"|yok\s+say|görmezden\s+gel|unut|ignorera|glöm|puuza|bỏ\s+qua|không\s+tuân\s+theo"
    r"|ne\s+tiens\s+plus\s+compte\s+de|ne\s+tenez\s+plus\s+compte\s+de|no\s+tengas\s+en\s+cuenta"
    r"|não\s+leve\s+em\s+conta|non\s+tenere\s+conto\s+di|negeer\s+voortaan)"
)
_USER = (
    r"(?:usuario|utilisateur|nutzer|benutzer|anwender|utente|usuário|usuario|gebruiker|użytkownik\w*"
    r"|uživatel\w*|пользовател\w*|користувач\w*|pengguna|kullanıcı\w*|användare\w*|mtumiaji"
    r"|người\s+dùng)"
)
_MEMORY = (
    r"(?:memoria|mémoire|gedächtnis|speicher|memória|geheugen|pamięci|pamięć|paměti|памят\w+"
    r"|memori|hafıza\w*|minne|kumbukumbu|bộ\s+nhớ)"
)
_UNRESTRICTED = (
    r"(?:sin\s+(?:ninguna\s+)?(?:restricci\w+|l[íi]mites|reglas|filtros)|sans\s+(?:aucune\s+)?(?:restriction|limite|r[èe]gle|filtre)s?"
    r"|ohne\s+(?:jegliche\s+)?(?:einschränkungen|grenzen|regeln|filter)|senza\s+(?:alcuna\s+|alcun\s+)?(?:restrizion\w|limit\w|regol\w|filtr\w)"
    r"|sem\s+(?:nenhuma\s+)?(?:restriç\w+|limites|regras|filtros)|zonder\s+(?:enige\s+)?(?:beperkingen|regels|filters)"
    r"|bez\s+(?:żadnych\s+)?(?:ograniczeń|zasad|filtrów)|bez\s+(?:jakýchkoli\s+)?omezení|без\s+(?:каких-либо\s+|будь-яких\s+)?(?:ограничений|правил|фильтров|обмежень)"
    r"|tanpa\s+(?:batasan|aturan|filter)|kısıtlamasız|sınırsız|utan\s+(?:några\s+)?(?:begränsningar|regler)"
    r"|không\s+(?:có\s+)?(?:giới\s+hạn|hạn\s+chế)|bila\s+vikwazo|modo\s+desarrollador|mode\s+d[ée]veloppeur"
    r"|entwicklermodus|modalità\s+sviluppatore|modo\s+desenvolvedor|режим\s+разработчика)"
)
_SEND = (
    r"(?:env[íi]a\w*|manda\w*|sube|publica|envoie\w*|transmets|sende\w*|schick\w*|lade\s+hoch|invia\w*"
    r"|carica|envie\w*|mande|stuur|verstuur|wyślij|prześlij|pošli|отправь\w*|перешли|загрузи|надішли"
    r"|відправ\w*|kirim\w*|unggah|gönder\w*|yükle|skicka|ladda\s+upp|tuma|gửi|tải\s+lên|inclu[iy]\w*"
    r"|incluez|füge\s+\w+\s+ein|includi|inclua|voeg\s+\w+\s+toe|dołącz|включи\w*|додай)"
)

OVERRIDE = (
    rf"\b{_IGNORE}\s+(?:[\w'’]+\s+){{0,3}}?{_BEFORE}\s+(?:[\w'’]+\s+){{0,2}}?{_INSTR}",
    rf"\b{_IGNORE}\s+(?:[\w'’]+\s+){{0,3}}?{_INSTR}\s+(?:[\w'’]+\s+){{0,1}}?{_BEFORE}",
    r"(?:prompt\s+(?:del|do|di)\s+sistema|invite\s+syst[èe]me|prompt\s+syst[èe]me|systemprompt|system-prompt"
    r"|systeemprompt|prompt\s+systemowy|системн\w+\s+(?:промпт|подсказк\w+|инструкци\w+)|системн\w+\s+промпт"
    r"|prompt\s+sistem|sistem\s+istemi|systemprompten|lời\s+nhắc\s+hệ\s+thống)"
    r"[^.\n]{0,60}?(?:ya\s+no|n'est\s+plus|nicht\s+mehr|non\s+è\s+più|não\s+é\s+mais|niet\s+meer|nie\s+jest|больше\s+не"
    r"|більше\s+не|tidak\s+lagi|artık|inte\s+längre|hết\s+hiệu\s+lực|không\s+còn|anulad|annul|ungültig|nulo|nul)",
    r"(?:忽略|无视|無視)(?:用户|用戶)的?(?:要求|指示|请求|问题)|ユーザーの(?:指示|要求|質問)を無視|사용자의\s*(?:지시|요청)[을를]?\s*무시",
    rf"{_INSTR}[^.\n]{{0,40}}?(?:ya\s+no\s+(?:son|es)\s+válid|ne\s+sont\s+plus\s+valables?|nicht\s+mehr\s+gültig|non\s+sono\s+più\s+valid|não\s+são\s+mais\s+válid|niet\s+meer\s+geldig|nie\s+są\s+już\s+ważne|больше\s+не\s+действ|більше\s+не\s+чинн|artık\s+geçerli\s+değil|tidak\s+lagi\s+berlaku)",
    rf"{_BEFORE}\s+{_INSTR}\s+(?:\w+\s+){{0,3}}?(?:waren|sind|eran|son|étaient|sont|erano|sono|eram|são|zijn|były|są|были)\s+(?:nur\s+|solo\s+|seulement\s+|apenas\s+|maar\s+|tylko\s+|только\s+)?(?:ein\s+test|una\s+prueba|un\s+test|una\s+prova|um\s+teste|een\s+test|testem|тест)",
    r"(?:忽略|无视|無視|忽視|忘记|忘掉|不要理会)[^。\n]{0,12}?(?:之前|以前|先前|上面|上述|所有|全部|此前|前面)[^。\n]{0,8}?(?:指令|指示|说明|說明|提示|规则|規則|命令)",
    r"(?:系统提示|系統提示|系统指令)[^。\n]{0,12}?(?:作废|失效|无效|無效|不再)",
    r"(?:以前|これまで|前|上記|先ほど|すべて)の[^。\n]{0,8}?(?:指示|命令|指令|ルール)(?:は|を)[^。\n]{0,8}?(?:無視|忘れ|無効)",
    r"システムプロンプト[^。\n]{0,12}?(?:無効|無視)",
    r"(?:이전|앞의|위의|기존)(?:의)?\s*(?:모든\s*)?(?:지시|명령|지침|규칙)[^.\n]{0,8}?무시",
    r"시스템\s*프롬프트[^.\n]{0,16}?(?:유효하지|무효|무시)",
    r"تجاهل\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الأوامر|الإرشادات)",
    r"(?:पिछले|पहले\s+के)\s+(?:सभी\s+)?(?:निर्देश\S*|आदेश\S*)\s+(?:को\s+)?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)",
    r"התעלם\s+מ(?:כל\s+)?ה?(?:הוראות|הנחיות)",
    r"(?:আগের|পূর্ববর্তী)\s+(?:সব\s+|সমস্ত\s+)?নির্দেশ\w*\s+(?:উপেক্ষা|ভুলে)",
    r"(?:เพิกเฉย|ละเว้น|ไม่ต้องสนใจ)(?:ต่อ)?คำสั่ง",
    r"\b(?:ignora|olvida|ignore|oublie|vergiss|ignoriere|dimentica|esqueça|negeer|zignoruj|забудь|игнорируй)\s+(?:todo|tout|alles|tutto|tudo|alles|wszystko|всё|все)\s+(?:lo\s+)?(?:anterior|ce\s+qui\s+précède|vorherige|precedente|acima|hiervoor|powyższe|выше|что\s+было)",
)

ROLE_HIJACK = (
    rf"\b{_UNRESTRICTED}\b",
    r"(?:从现在(?:起|开始)|現在から|今から)[^。\n]{0,8}?(?:你|您|あなた)(?:是|は)",
    r"(?:没有|沒有|无|無)(?:任何)?(?:限制|约束|規則)的|制限のない|제한(?:이)?\s*없는|بلا\s+قيود|बिना\s+(?:किसी\s+)?(?:प्रतिबंध|सीमा)",
    r"(?:开发者模式|開發者模式|開発者モード|개발자\s*모드)[^。.\n]{0,20}?(?:AI|你|您|あなた|당신|너|安全|ルール|规则|규칙|制限|限制|제한)",
)

CONCEALMENT = (
    rf"\bno\s+(?:le\s+)?(?:digas|cuentes|menciones|informes)\s+(?:nada\s+)?al\s+{_USER}",
    rf"\bsin\s+(?:avisar|informar|decir(?:le)?\s+nada)\s+al\s+{_USER}",
    rf"\b(?:ne\s+(?:le\s+)?(?:dis|dites|mentionne)\s+rien\s+à\s+l'{_USER}|sans\s+(?:en\s+)?(?:informer|prévenir|avertir)\s+l'{_USER})",
    rf"\b(?:sag|erzähl|sage|erzähle)\s+(?:dem|der)\s+{_USER}\s+nichts|ohne\s+(?:den|die)\s+{_USER}\s+zu\s+(?:informieren|fragen|benachrichtigen)",
    rf"\b(?:non\s+(?:dirlo|dire\s+niente|informare)\s+(?:all'|l'){_USER}|senza\s+(?:dirlo|informare|avvisare)\s+(?:all'|l'){_USER})",
    rf"\b(?:não\s+(?:conte|diga|informe|avise)\s+(?:nada\s+)?(?:ao|o)\s+{_USER}|sem\s+(?:avisar|informar)\s+o\s+{_USER})",
    rf"\b(?:vertel\s+(?:de\s+)?{_USER}\s+niets|zonder\s+(?:de\s+)?{_USER}\s+te\s+(?:informeren|vertellen))",
    rf"\b(?:nie\s+(?:mów|informuj)\s+{_USER}|bez\s+informowania\s+{_USER})",
    rf"\b(?:neříkej|neinformuj)\s+{_USER}",
    rf"(?:не\s+(?:говори|сообщай|рассказывай|кажи|повідомляй)\s+{_USER}|без\s+ведома\s+{_USER}|так,?\s+чтобы\s+{_USER}\s+не)",
    rf"\b(?:jangan\s+(?:beri\s+tahu|bilang|kasih\s+tahu)\s+{_USER}|tanpa\s+memberi\s+tahu\s+{_USER})",
    rf"\b{_USER}(?:ya|ye|a)?\s+(?:söyleme|bildirme|haber\s+verme)",
    rf"\b(?:berätta\s+inte|säg\s+inget)\s+(?:för|till)\s+{_USER}",
    r"\b(?:đừng|không)\s+(?:cho|nói\s+cho|báo\s+cho)\s+người\s+dùng\s+(?:biết)?",
    r"usiambie\s+mtumiaji",
    r"(?:不要|别|不得|切勿)(?:告诉|告知|透露给|让)用户",
    r"ユーザー(?:に|には)[^。\n]{0,10}?(?:言わない|伝えない|知らせない|教えない|言わないで|伝えないで|知らせないで)",
    r"사용자(?:에게|한테)[^.\n]{0,10}?(?:알리지|말하지|알려주지|언급하지)\s*(?:마|말)",
    r"ユーザー(?:に|には)[^。\n]{0,6}?(?:伝えずに|知らせずに|言わずに)|用户(?:不知情|不知道的情况下)",
    r"(?:उपयोगकर्ता|यूज़र)\s+को\s+बताए\s+बिना",
    r"لا\s+(?:تخبر|تُخبر|تعلم)\s+المستخدم",
    r"(?:उपयोगकर्ता|यूज़र)\s+को\s+(?:मत|न)\s+(?:बताएं|बताना|बताओ)",
    r"אל\s+תספר\s+למשתמש",
)

MEMORY_POISONING = (
    rf"\b(?:guarda|guárdalo|almacena|salva|salve|salvar|grava|enregistre|mémorise|speicher\w*|merke\s+dir"
    rf"|memorizza|sla\s+\w+\s+op|onthoud|zapisz|zapamiętaj|ulož|сохрани|запомни|збережи|запам'ятай"
    rf"|simpan|ingat|kaydet|spara|hifadhi|lưu|ghi\s+nhớ)\w*\s+(?:[\w']+\s+){{0,6}}?(?:en|na|in|dans|im|nella|do|в|у|ke|di|i|kwenye|vào)?\s*(?:tu\s+|ta\s+|sua\s+|seu\s+|deinem\s+|dein\s+|tua\s+|je\s+|twojej\s+|свою\s+|твою\s+|mu\s+)?(?:\w+\s+)?{_MEMORY}",
    r"(?:写入|存入|保存到|记入)(?:你的)?(?:长期)?记忆|长期记忆|永久记忆",
    r"(?:メモリ|記憶|長期記憶)に(?:保存|記録|書き込)",
    r"(?:메모리|기억|장기\s*기억)에\s*(?:저장|기록)",
    r"احفظ\s+(?:هذا\s+)?في\s+(?:الذاكرة|ذاكرتك)",
    r"मेमोरी\s+में\s+(?:सहेजें|सेव)",
    r"\b(?:kalıcı\s+)?hafızana\s+kaydet",
)

# An address to the model in another language: "para el asistente", "给AI的说明".
ADDRESSED = (
    r"(?:para\s+el\s+asistente|al\s+asistente|asistente\s*[:,]|pour\s+l'(?:assistant|ia)|à\s+l'(?:ia|assistant)"
    r"|assistant\s*:|für\s+(?:den\s+agenten|die\s+ki|den\s+assistenten)|an\s+die\s+ki|hinweis\s+für\s+den\s+agenten"
    r"|per\s+l'ia|all'assistente|assistente\s*[:,]|para\s+o\s+assistente|ao\s+assistente|voor\s+de\s+assistent"
    r"|opmerking\s+voor\s+de\s+assistent|asystencie|do\s+asystenta|dla\s+ai|asistente\s+de\s+ia|ассистент\s*[:,]"
    r"|для\s+(?:ии|ai|ассистента|агента)|агент\s*[:,]|асистенте|для\s+ші|asisten\s*[:,]|untuk\s+ai"
    r"|yapay\s+zekaya|asistan\s*[:,]|till\s+ai|assistenten\s*[:,]|msaidizi\s*[:,]|trợ\s+lý\s*[:,]|gửi\s+ai"
    r"|给\s*ai|致\s*ai|ai\s*(?:助手)?[:：,，]|助手[:：,，]|aiへ|aiに(?:告ぐ|対して)|アシスタント(?:へ|さん)?[:：、]"
    r"|ai에게|어시스턴트(?:에게)?[:,]|أيها\s+المساعد|إلى\s+المساعد|للذكاء\s+الاصطناعي|सहायक\s*[:,]|एआई\s+के\s+लिए"
    r"|למודל|לעוזר)"
)
# An act on the user's machine or repository, said to the model in another language.
ACTS = (
    r"(?:sin\s+(?:revisión|confirmación|preguntar)|sans\s+(?:revue|relecture|confirmation|demander)"
    r"|ohne\s+(?:review|prüfung|bestätigung|rückfrage|nachzufragen)|senza\s+(?:revisione|conferma|chiedere)"
    r"|sem\s+(?:revisão|confirmação|perguntar)|zonder\s+(?:review|bevestiging)|bez\s+(?:przeglądu|potwierdzenia|pytania)"
    r"|без\s+(?:ревью|проверки|подтверждения|спроса)|tanpa\s+(?:review|konfirmasi)|onaysız|incelemeden"
    r"|utan\s+(?:granskning|bekräftelse)|不经(?:审查|审核|确认)|无需(?:审查|确认)|レビューなしで|確認せずに"
    r"|리뷰\s*없이|확인\s*없이|دون\s+(?:مراجعة|تأكيد)|बिना\s+(?:समीक्षा|पुष्टि)|không\s+cần\s+(?:review|xác\s+nhận))"
)
SEND = (
    rf"\b{_SEND}\b|上传|上傳|发送|發送|发到|传到|送信|アップロード|送って|送る|전송|보내|업로드"
    r"|أرسل|ارفع|भेज|अपलोड|שלח|投稿|貼り付け|发布到|게시"
)
# Secrets named in other languages than English.
SECRETS = (
    r"(?:variables?\s+de\s+entorno|variables?\s+d'environnement|umgebungsvariablen|variabili\s+d'ambiente"
    r"|variáveis\s+de\s+ambiente|omgevingsvariabelen|zmienne\s+środowiskowe|переменн\w+\s+окружения"
    r"|змінн\w+\s+середовища|环境变量|環境變數|環境変数|환경\s*변수|متغيرات\s+البيئة|पर्यावरण\s+चर"
    r"|biến\s+môi\s+trường|ortam\s+değişkenleri|variabel\s+lingkungan|miljövariabler"
    r"|clave\s+(?:de\s+(?:la\s+)?)?api|chave\s+da\s+api|chiave\s+api|clé\s+(?:d'\s*)?api|api-schlüssel|ключ\w*\s+api"
    r"|contraseñas?|mots?\s+de\s+passe|passw(?:o|ö)rt\w*|senhas?|wachtwoord\w*|hasł\w+|парол\w+|密码|密碼|パスワード"
    r"|비밀번호|كلمة\s+المرور|पासवर्ड|токен\w*|令牌|トークン|토큰|密钥|秘钥|秘密鍵|시크릿|"
    r"historial|historique|verlauf|cronologia|histórico|geschiedenis|истори\w+|历史记录|履歴|기록"
    r"|prompt\s+del\s+sistema|prompt\s+système|systemprompt|系统提示|システムプロンプト|시스템\s*프롬프트|موجه\s+النظام"
    r"|المفاتيح|مفاتيح|llaves|clés|schlüssel|chiavi|chaves|sleutels|klucze|ключи|anahtarlar|kunci|nycklar|密钥|キー|키"
    r"|conversación|conversation|unterhaltung|conversazione|conversa|gesprek|rozmow\w+|разговор\w*|对话|会話|대화)"
)
# The model's next reply, as a place to send data, in other languages.
NEXT_REPLY = (
    r"(?:(?:tu|su)\s+próxima\s+respuesta|(?:ta|votre)\s+prochaine\s+réponse|(?:deiner|ihrer)\s+nächsten\s+antwort"
    r"|(?:tua|sua)\s+prossima\s+risposta|(?:sua|tua)\s+próxima\s+resposta|je\s+volgende\s+antwoord"
    r"|(?:twojej|swojej)\s+następnej\s+odpowiedzi|следующ\w+\s+ответ\w*|наступн\w+\s+відповід\w*"
    r"|下一个回复|下次回复|下一条回复|次の(?:回答|返信|応答)|다음\s*(?:답변|응답)|الرد\s+التالي|अगले\s+(?:जवाब|उत्तर)"
    r"|câu\s+trả\s+lời\s+tiếp\s+theo|sonraki\s+(?:cevab|yanıt)\w*|jawaban\s+berikutnya|nästa\s+svar"
    r"|返信に含め|回复中|외부(?:로|에)|外部に|外部へ|对外|à\s+l'extérieur|nach\s+außen|al\s+exterior)"
)
# Orders to a model in other languages: authority, consent, a new policy, no questions.
DIRECTIVE = (
    r"(?:autorizad[oa]|autorisée?|autorisiert|berechtigt|autorizzat[oa]|upoważnion\w+|уполномочен\w*"
    r"|разрешен\w*|разрешил\w*|дозволено|yetkili\w*|diizinkan|behörig|được\s+phép|有权|已授权|授权|許可されて"
    r"|권한이\s*있|مخول|مصرح|अधिकृत)",
    r"(?:nueva\s+política|nouvelle\s+politique|neue\s+richtlinie|nuova\s+politica|nova\s+política|nieuw\s+beleid"
    r"|nowa\s+polityka|новая\s+политика|нова\s+політика|yeni\s+politika|kebijakan\s+baru|ny\s+policy|新政策"
    r"|新しいポリシー|새\s*정책|سياسة\s+جديدة|नई\s+नीति|chính\s+sách\s+mới|nueva\s+sesión|nouvelle\s+session"
    r"|neue\s+sitzung|nuova\s+sessione|nova\s+sessão|новая\s+сессия|新会话|新しいセッション|새\s*세션)",
    ACTS,
    r"(?:사용자\s*요청보다\s*우선|优先于用户|ユーザーの(?:指示|要求)より優先|नया\s+निर्देश|新指令|新しい指示|새로운\s*지시"
    r"|nueva\s+instrucción|nouvelle\s+(?:consigne|instruction)|neue\s+anweisung|nuova\s+istruzione|nova\s+instrução"
    r"|новая\s+инструкция|yeni\s+talimat|instruksi\s+baru)",
    r"(?:desactiva|désactive|deaktiviere|disattiva|desativ|wyłącz|отключи|вимкни|devre\s+dışı\s+bırak|nonaktifkan"
    r"|inaktivera|tắt|关闭|禁用|無効に|비활성화)\w*\s+(?:\S+\s+){0,4}?(?:protección|protection|schutz|protezione|proteção"
    r"|ochron\w*|защит\w*|захист\w*|koruma\w*|perlindungan|skydd\w*|bảo\s+vệ|保护|保護|보호|ci|tests?|kontrol\w*|checks?)",
)
# A header naming a vendor's team, in any language: "رسالة من فريق الأمان في Anthropic".
VENDOR = r"(?:anthropic|openai|google\s+deepmind|github\s+copilot)"
# Printing or showing a secret, in other languages.
PRINT = (
    r"(?:طباعة|اطبع|أظهر|اعرض|imprime|muestra|affiche|imprimez|drucke|zeige|gib\s+\w+\s+aus|stampa|mostra"
    r"|imprima|wydrukuj|pokaż|выведи|покажи|надрукуй|yazdır|göster|cetak|tampilkan|skriv\s+ut|visa|in\s+ra"
    r"|打印|输出|显示|出力|表示|출력|보여)"
)
# Acts against the user said in other languages: weakening protections, pushing to main.
HARM = (
    r"(?:desactiva|désactive|deaktiviere|disattiva|desativ|wyłącz|отключи|вимкни|devre\s+dışı\s+bırak|nonaktifkan"
    r"|inaktivera|tắt|关闭|禁用|無効に|비활성화)\w*\s+(?:\S+\s+){0,4}?(?:protección|protection|schutz|protezione|proteção"
    r"|ochron\w*|защит\w*|захист\w*|koruma\w*|perlindungan|skydd\w*|bảo\s+vệ|保护|保護|보호|ci|tests?|kontrol\w*|checks?)",
    r"(?:kontrol\w*|koruma\w*|test\w*|ci\w*)\s+(?:\S+\s+){0,2}?devre\s+dışı\s+bırak",
    r"force-?push\w*[^.\n]{0,30}\b(?:to|origin|into|auf|sur|a|en|para|na|в|на)\s+(?:the\s+)?(?:main|master)\b"
    r"|\b(?:main|master)\S*\s+force-?push",
)
# Not doing something, in other languages: what follows is forbidden, not ordered.
NEGATION = (
    r"(?:\b(?:nunca|jamais|niemals|nie|mai|não|nooit|никогда|ніколи|asla|jangan|aldrig|kamwe)\b"
    r"|không\s+bao\s+giờ|絶対に|決して|不要|别|절대|\bلا\b|मत|אל)"
)
# "Now", said to hurry a model, in other languages.
NOW = (
    r"(?:sofort|inmediatamente|immédiatement|subito|imediatamente|onmiddellijk|natychmiast|немедленно"
    r"|срочно|негайно|hemen|segera|omedelbart|ngay\s+lập\s+tức|立即|立刻|马上|すぐに|直ちに|즉시|فورا|तुरंत)"
)
# Consent the user is said to have given, in other languages.
CONSENT = (
    r"(?:hat\s+bereits\s+(?:zugestimmt|genehmigt)|ya\s+(?:ha\s+)?(?:aprobado|aceptado|aprobó|aceptó)"
    r"|a\s+déjà\s+(?:approuvé|accepté)|ha\s+già\s+(?:approvato|accettato)|já\s+(?:aprovou|concordou)"
    r"|heeft\s+al\s+(?:goedgekeurd|ingestemd)|już\s+(?:zatwierdził|zgodził)|уже\s+(?:одобрил|согласился|разрешил)"
    r"|вже\s+(?:схвалив|погодився)|zaten\s+(?:onayladı|kabul\s+etti)|sudah\s+(?:menyetujui|setuju)"
    r"|har\s+redan\s+godkänt|đã\s+(?:đồng\s+ý|phê\s+duyệt)|已经(?:同意|批准)|すでに(?:承認|同意)"
    r"|이미\s*(?:승인|동의)|وافق\s+بالفعل|पहले\s+ही\s+(?:मंजूरी|सहमति)|zijn\s+al\s+op\s+de\s+hoogte)"
)
